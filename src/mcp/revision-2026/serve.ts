import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Context } from 'koa';
import type { McpDeps } from '../deps.js';
import type { BorrowerPrincipal } from '../../agents/types.js';
import { logMcpCalls } from '../call-log.js';
import { CallRecord } from '../call-record.js';
import { internalError, type McpHttpError } from '../../http/mcp-errors.js';
import { cleanRpcErrors } from '../rpc-answers.js';
import { createModernMcpServer } from './server.js';
import { methodNotFound, modernRefusal } from './refusals.js';

/**
 * Methods of the revision this server does not serve: `subscriptions/listen` would hold an SSE
 * stream open for notifications a stateless server with a fixed tool list never sends.
 */
const UNSERVED_METHODS = new Set(['subscriptions/listen']);

/**
 * Whether the v2 server's own classification (body-primary: a `_meta` protocol-version claim, or a
 * modern MCP-Protocol-Version header) takes this message to the 2026-07-28 path. Everything else
 * (initialize, envelope-less requests, batches of those) stays with the 2025-era server.
 */
export async function isModernRevisionRequest(request: Request, body: unknown): Promise<boolean> {
  return !(await isLegacyRequest(request, body));
}

export interface ModernCall {
  request: Request;
  body: unknown;
  authInfo: AuthInfo;
  principal: BorrowerPrincipal;
  requestId: string;
  started: number;
}

/** MCP-Protocol-Version and Mcp-Method name what the body's envelope and method name. */
function headersAgree(request: Request, method: string, body: unknown): boolean {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  const claimed = meta?.['io.modelcontextprotocol/protocolVersion'];
  return request.headers.get('mcp-method')?.trim() === method && typeof claimed === 'string' && request.headers.get('mcp-protocol-version')?.trim() === claimed;
}

function send(ctx: Context, e: McpHttpError): void {
  ctx.status = e.status;
  for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
  ctx.body = e.body;
}

function parseJson(text: string): unknown {
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One 2026-07-28 message, after the endpoint's bearer, body and scope checks: a stock v2 handler
 * (`createMcpHandler`, modern only) over a fresh server runs the revision's validation ladder
 * (`_meta` envelope, MCP-Protocol-Version / Mcp-Method / Mcp-Name against the body: 400 -32020;
 * 404 -32601 for unknown methods) and the call. No session: nothing outlives the request.
 */
export async function serveModernRequest(deps: McpDeps, ctx: Context, call: ModernCall): Promise<void> {
  const { body, requestId, principal } = call;
  const method = (body as { method?: unknown } | null)?.method;
  // Only once its headers agree with the body: otherwise the handler's ladder answers -32020 first.
  if (typeof method === 'string' && UNSERVED_METHODS.has(method) && headersAgree(call.request, method, body)) {
    const id = (body as { id?: unknown }).id;
    return send(ctx, methodNotFound(method, requestId, typeof id === 'string' || typeof id === 'number' ? id : null));
  }
  const record = new CallRecord();
  const failures: Error[] = [];
  const handler = createMcpHandler(() => createModernMcpServer({ deps, record, requestId }), { legacy: 'reject', onerror: (e) => failures.push(e) });
  try {
    const response = await handler.fetch(call.request, { authInfo: call.authInfo, parsedBody: body });
    const text = await response.text();
    let responseBody = parseJson(text);
    if (response.status >= 400) {
      const refusal = modernRefusal(response.status, responseBody, requestId);
      if (refusal.status >= 500) deps.logger.error('mcp request failed', { requestId, borrowerId: principal.borrowerId, error: failures[0] });
      else deps.logger.info('mcp rejected', { requestId, status: refusal.status, reason: refusal.body.error.message });
      return send(ctx, refusal);
    }
    if (responseBody !== undefined) {
      const cleaned = cleanRpcErrors(body, responseBody, requestId);
      for (const error of cleaned.internal) deps.logger.error('mcp internal error', { requestId, borrowerId: principal.borrowerId, error });
      responseBody = cleaned.body;
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(responseBody);
    } else if (text) {
      ctx.type = response.headers.get('content-type') ?? 'application/json';
      ctx.body = text;
    } else {
      ctx.body = null;
    }
    // After the body: Koa turns a null body into 204, and a notification is answered 202.
    ctx.status = response.status;
    logMcpCalls(deps.logger, { requestId, principal, latencyMs: Math.round(performance.now() - call.started) }, body, responseBody, record, deps.metrics?.api);
  } catch (err) {
    deps.logger.error('mcp request failed', { requestId, borrowerId: principal.borrowerId, error: err });
    send(ctx, internalError(requestId));
  } finally {
    await handler.close().catch(() => undefined);
  }
}
