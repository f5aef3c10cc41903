import type { ApiMetrics } from '../observability/metrics.js';
import type { BorrowerPrincipal } from '../agents/types.js';
import type { Logger } from '../observability/logger.js';
import type { CallRecord } from './call-record.js';
import { toolLabel, toolOutcomeLabel } from '../observability/labels.js';

interface RpcMessage {
  id?: unknown;
  method?: unknown;
  params?: { name?: unknown } | null;
}

interface RpcResponse {
  id?: unknown;
  error?: { code?: unknown };
  result?: { isError?: unknown };
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
const isId = (v: unknown): v is string | number => typeof v === 'string' || typeof v === 'number';

/**
 * One log line per JSON-RPC request of an HTTP call: request id, borrower, client, method, tool,
 * outcome and latency. The token never reaches the log.
 */
export function logMcpCalls(
  logger: Logger,
  fields: { requestId: string; principal: BorrowerPrincipal; latencyMs: number },
  requestBody: unknown,
  responseBody: unknown,
  record: CallRecord,
  metrics?: ApiMetrics,
): void {
  const responses = new Map<string | number, RpcResponse>();
  for (const r of asList(responseBody)) {
    if (r && typeof r === 'object' && isId((r as RpcResponse).id)) responses.set((r as RpcResponse).id as string | number, r as RpcResponse);
  }
  for (const m of asList(requestBody)) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as RpcMessage;
    if (typeof msg.method !== 'string' || !isId(msg.id)) continue;
    const tool = msg.method === 'tools/call' && typeof msg.params?.name === 'string' ? msg.params.name : undefined;
    const recorded = record.get(msg.id);
    const response = responses.get(msg.id);
    let outcome: string = recorded?.outcome ?? 'ok';
    let errorCode: unknown = recorded?.errorCode;
    if (!recorded && response?.error) {
      outcome = 'rpc_error';
      errorCode = response.error.code;
    } else if (!recorded && response?.result?.isError === true) {
      // The SDK refused the call before our handler ran: invalid arguments or an unknown tool.
      outcome = 'invalid_call';
    }
    // The tool name comes from the request: only the eight known tools get a series of their own.
    if (tool) metrics?.mcpToolCalls.inc({ tool: toolLabel(tool), outcome: toolOutcomeLabel(outcome === 'ok' ? 'ok' : (errorCode ?? outcome)) });
    logger.info('mcp call', {
      requestId: fields.requestId,
      borrowerId: fields.principal.borrowerId,
      clientId: fields.principal.clientId,
      method: msg.method.slice(0, 64),
      ...(tool ? { tool: tool.slice(0, 64) } : {}),
      outcome,
      ...(errorCode !== undefined ? { errorCode } : {}),
      latencyMs: fields.latencyMs,
    });
  }
}
