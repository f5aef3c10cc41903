import { McpServer } from '@modelcontextprotocol/server';
import { INSTRUCTIONS, SERVER_INFO } from '../server.js';
import type { ToolRuntime } from '../tools/define.js';
import { TOOLS } from '../tools/index.js';
import { registerModernTool } from './register-tool.js';

/**
 * A fresh v2 server per request for the 2026-07-28 revision, with the eight tools of the shared
 * registry bound to this request's runtime. The tool list never changes, so `listChanged` is off
 * (the v2 server would otherwise advertise it and accept `subscriptions/listen`).
 */
export function createModernMcpServer(rt: ToolRuntime): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  for (const def of TOOLS) registerModernTool(server, def, rt);
  closeToolPrototypeLookup(server);
  return server;
}

/**
 * As in ../server.ts: the v2 server also looks tools up on a plain object, so `valueOf` would be
 * found on Object.prototype ("Tool valueOf disabled"); without a prototype it is unknown like any
 * other name that is not ours.
 */
function closeToolPrototypeLookup(server: McpServer): void {
  const registry = (server as unknown as { _registeredTools?: unknown })._registeredTools;
  if (typeof registry === 'object' && registry !== null) Object.setPrototypeOf(registry, null);
}
