import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { McpDeps } from '../deps.js';
import { ToolError } from '../../domain/tool-errors.js';
import { FencedOut } from '../../store/fencing.js';
import { LeaseBusy } from '../../store/lease-lock.js';
import { isTransientDependencyError } from '../../http/transient-errors.js';
import type { BorrowerPrincipal } from '../../agents/types.js';
import type { ToolName } from '@credit-facilitator/wire/onboarding';
import { principalFromAuthInfo } from '../auth.js';
import type { CallRecord } from '../call-record.js';

type InputSchema = z.ZodObject;

/** One agent tool: its MCP description plus the service function behind it. */
export interface ToolDefinition<I extends InputSchema = InputSchema> {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema?: z.ZodObject;
  annotations: ToolAnnotations;
  run(deps: McpDeps, principal: BorrowerPrincipal, input: z.output<I>): Promise<object>;
  /** One short line for the text content, telling the agent what happened and what to do next. */
  summarize(output: Record<string, unknown>): string;
}

/** Ties a definition's schema to its handler's input type. */
export function defineTool<I extends InputSchema>(def: ToolDefinition<I>): ToolDefinition<I> {
  return def;
}

export interface ToolRuntime {
  deps: McpDeps;
  record: CallRecord;
  /** The HTTP request id, for logs and INTERNAL error messages. */
  requestId: string;
}

/**
 * Errors are a tool result with isError and the JSON `{"error":{code,message,...}}` as text.
 * They carry no structuredContent: the stock SDK client validates structuredContent against the
 * tool's outputSchema even on errors, and would hide the real error behind a schema mismatch.
 */
function errorResult(error: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }] };
}

function okResult(def: ToolDefinition<InputSchema>, output: object): CallToolResult {
  const structured = output as Record<string, unknown>;
  return {
    structuredContent: structured,
    content: [{ type: 'text', text: `${def.summarize(structured)}\n${JSON.stringify(structured)}` }],
  };
}

/**
 * A store lock that stayed busy, or a store or Temporal away for a moment: the "retry shortly"
 * every tool already documents.
 */
function retryLater(thrown: unknown): ToolError | undefined {
  if (thrown instanceof LeaseBusy || thrown instanceof FencedOut) return new ToolError('UNAVAILABLE', 'the borrower record is busy; retry shortly');
  if (isTransientDependencyError(thrown)) return new ToolError('UNAVAILABLE', 'a dependency is briefly unavailable; retry shortly');
  return undefined;
}

export async function runTool(def: ToolDefinition<InputSchema>, rt: ToolRuntime, input: unknown, extra: { authInfo?: Parameters<typeof principalFromAuthInfo>[0]; requestId: string | number }): Promise<CallToolResult> {
  const principal = principalFromAuthInfo(extra.authInfo);
  if (!principal) {
    rt.record.set(extra.requestId, { tool: def.name, outcome: 'tool_error', errorCode: 'UNAUTHENTICATED' });
    return errorResult({ code: 'UNAUTHENTICATED', message: 'No borrower token reached this tool.' });
  }
  // The scope was checked once, by the endpoint's gate (scope-gate.ts), before any revision's server saw the call.
  try {
    const output = await def.run(rt.deps, principal, input as never);
    rt.record.set(extra.requestId, { tool: def.name, outcome: 'ok' });
    return okResult(def, output);
  } catch (thrown) {
    const err = retryLater(thrown) ?? thrown;
    if (err instanceof ToolError) {
      rt.record.set(extra.requestId, { tool: def.name, outcome: 'tool_error', errorCode: err.code });
      return errorResult(err.toJSON().error);
    }
    rt.record.set(extra.requestId, { tool: def.name, outcome: 'internal_error', errorCode: 'INTERNAL' });
    rt.deps.logger.error('mcp tool failed', { requestId: rt.requestId, tool: def.name, borrowerId: principal.borrowerId, error: err });
    return errorResult({ code: 'INTERNAL', message: `An internal error occurred. Retry later; quote ${rt.requestId} if it persists.`, requestId: rt.requestId });
  }
}

/** What every revision's server lists for a tool: the same title, schemas and annotations. */
export function toolConfig(def: ToolDefinition<InputSchema>) {
  return {
    title: def.title,
    description: def.description,
    inputSchema: def.inputSchema,
    ...(def.outputSchema ? { outputSchema: def.outputSchema } : {}),
    annotations: { title: def.title, ...def.annotations },
  };
}

export function registerTool(server: McpServer, def: ToolDefinition<InputSchema>, rt: ToolRuntime): void {
  server.registerTool(
    def.name,
    toolConfig(def),
    (async (input: unknown, extra: { authInfo?: Parameters<typeof principalFromAuthInfo>[0]; requestId: string | number }) =>
      runTool(def, rt, input, extra)) as never,
  );
}
