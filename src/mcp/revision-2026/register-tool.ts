import type { McpServer } from '@modelcontextprotocol/server';
import { runTool, toolConfig, type ToolDefinition, type ToolRuntime } from '../tools/define.js';

/** What the v2 server hands a tool handler besides its input (the part runTool reads). */
interface ModernToolContext {
  mcpReq: { id: string | number };
  http?: { authInfo?: Parameters<typeof runTool>[3]['authInfo'] };
}

/**
 * Registers one definition of the shared registry (src/mcp/tools) on a v2 server: the same
 * schemas, annotations, scope check and handler (runTool) the 2025-era server uses.
 */
export function registerModernTool(server: McpServer, def: ToolDefinition, rt: ToolRuntime): void {
  server.registerTool(
    def.name,
    toolConfig(def),
    (async (input: unknown, ctx: ModernToolContext) => runTool(def, rt, input, { authInfo: ctx.http?.authInfo, requestId: ctx.mcpReq.id })) as never,
  );
}
