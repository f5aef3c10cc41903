import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'koa';
import type { McpDeps } from './deps.js';
import { BODY_NOT_JSON, MAX_BODY_BYTES, readJsonBody } from '../http/body.js';
import { mcpUrl } from '../config/env.js';
import { isApiError } from '../domain/errors.js';
import { authenticateBorrower } from './auth.js';
import { logMcpCalls } from './call-log.js';
import { CallRecord } from './call-record.js';
import {
  insufficientScope,
  internalError,
  invalidRequest,
  methodNotAllowed,
  parseError,
  payloadTooLarge,
  unauthorized,
  unavailable,
  unsupportedMediaType,
  unsupportedProtocolVersion,
  type McpHttpError,
} from '../http/mcp-errors.js';
import { resourceMetadataUrl } from './metadata.js';
import { cleanRpcErrors, transportRefusal } from './rpc-answers.js';
import { findScopeShortfall, stepUpScopes } from './scope-gate.js';
import { createMcpServer } from './server.js';
import { isTransientDependencyError } from '../http/transient-errors.js';
import { isModernRevisionRequest, serveModernRequest } from './revision-2026/serve.js';
import { SERVED_PROTOCOL_VERSIONS } from './revision-2026/versions.js';

function parseJson(text: string): unknown {
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/** The first id two requests of a batch share (notifications carry none). */
function repeatedRequestId(body: unknown): string | number | undefined {
  if (!Array.isArray(body)) return undefined;
  const seen = new Set<string | number>();
  for (const m of body) {
    const id = (m as { id?: unknown } | null)?.id;
    if (typeof (m as { method?: unknown } | null)?.method !== 'string' || (typeof id !== 'string' && typeof id !== 'number')) continue;
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}

function send(ctx: Context, e: McpHttpError): void {
  ctx.status = e.status;
  for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
  ctx.body = e.body;
}

async function readBody(ctx: Context, requestId: string): Promise<{ ok: true; body: unknown } | { ok: false; error: McpHttpError }> {
  try {
    return { ok: true, body: await readJsonBody(ctx) };
  } catch (err) {
    if (isApiError(err) && err.code === 'UNSUPPORTED_MEDIA_TYPE') return { ok: false, error: unsupportedMediaType(requestId) };
    if (isApiError(err) && err.code === 'PAYLOAD_TOO_LARGE') return { ok: false, error: payloadTooLarge(MAX_BODY_BYTES, requestId) };
    if (isApiError(err) && err.code === 'INVALID_REQUEST') {
      return { ok: false, error: err.message === BODY_NOT_JSON ? parseError(requestId) : invalidRequest(err.message, requestId) };
    }
    throw err;
  }
}

/**
 * A protocol version header we do not speak, on anything but `initialize` (which negotiates in its
 * params): the version and the id to answer with, else undefined.
 */
function unknownProtocolVersion(header: string, body: unknown): { requested: string; id: string | number | null } | undefined {
  if (header === '' || SUPPORTED_PROTOCOL_VERSIONS.includes(header)) return undefined;
  const messages = Array.isArray(body) ? body : [body];
  if (messages.some((m) => isInitializeRequest(m))) return undefined;
  const id = Array.isArray(body) ? undefined : (body as { id?: unknown } | null)?.id;
  return { requested: header, id: typeof id === 'string' || typeof id === 'number' ? id : null };
}

/** The SDK transport speaks Web Request/Response; the body is already parsed, so the request carries headers only. */
function webRequest(ctx: Context, url: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(url, { method: 'POST', headers });
}

/**
 * `{mcp_url}`: stateless Streamable HTTP. Bearer auth, then the JSON body (64 KiB, 32 levels; a
 * batch may not repeat a request id), then the revision: a 2026-07-28 message (`_meta` envelope)
 * is served natively by the v2 server after the scope gate (revision-2026/serve.ts); otherwise the
 * protocol version header (2024-11-05 to 2025-11-25; another one is -32022 with the list), then the
 * scope gate (403 insufficient_scope names the scopes to request: the tool's with those already
 * granted, so a stock client's re-authorisation loses none), then a fresh v1 MCP server and transport
 * answer the message(s) with JSON, cleaned of the SDK's own error shapes (rpc-answers.ts).
 */
export function mcpEndpoint(deps: McpDeps) {
  const metadataUrl = resourceMetadataUrl(deps.env);
  return async (ctx: Context): Promise<void> => {
    const started = performance.now();
    const requestId = ctx.state.requestId as string;
    if (ctx.method !== 'POST') return send(ctx, methodNotAllowed(requestId));

    let auth;
    try {
      auth = await authenticateBorrower(deps, ctx.get('authorization') || undefined);
    } catch (err) {
      // The grant lookup could not reach the store: neither accepted nor refused.
      if (isTransientDependencyError(err)) {
        deps.logger.warn('mcp auth: dependency unavailable', { requestId, error: err });
        return send(ctx, unavailable(requestId));
      }
      deps.logger.error('mcp auth failed', { requestId, error: err });
      return send(ctx, internalError(requestId));
    }
    if (!auth.ok) {
      deps.logger.info('mcp rejected', { requestId, status: 401, reason: auth.reason });
      return send(ctx, unauthorized(metadataUrl, auth.tokenPresented, requestId));
    }
    const { principal } = auth;
    const read = await readBody(ctx, requestId);
    if (!read.ok) return send(ctx, read.error);

    // The SDK answers a batch by request id: a repeated id would run both calls and drop one answer.
    const repeated = repeatedRequestId(read.body);
    if (repeated !== undefined) return send(ctx, invalidRequest(`Invalid Request: the batch repeats the request id ${JSON.stringify(repeated)}.`, requestId));

    // A 2026-07-28 message (its `_meta` names the revision) goes to the v2 server after the scope
    // gate. For the others, the SDK transport would refuse an unknown version too, but with a bare
    // -32000 and no id: a client needs -32022 and the list we support to pick one.
    const webReq = webRequest(ctx, mcpUrl(deps.env));
    const modern = await isModernRevisionRequest(webReq, read.body);
    const unknownVersion = modern ? undefined : unknownProtocolVersion(ctx.get('mcp-protocol-version'), read.body);
    if (unknownVersion) {
      deps.logger.info('mcp rejected', { requestId, status: 400, reason: 'unsupported protocol version' });
      return send(ctx, unsupportedProtocolVersion(unknownVersion.requested, SERVED_PROTOCOL_VERSIONS, requestId, unknownVersion.id));
    }

    const shortfall = findScopeShortfall(read.body, principal.scopes);
    if (shortfall) {
      deps.logger.info('mcp call', {
        requestId, borrowerId: principal.borrowerId, clientId: principal.clientId, method: 'tools/call', tool: shortfall.tool,
        outcome: 'insufficient_scope', missingScopes: shortfall.missing, latencyMs: Math.round(performance.now() - started),
      });
      const request = stepUpScopes(shortfall.needed, principal.scopes, auth.consentedScopes);
      return send(ctx, insufficientScope(metadataUrl, { ...shortfall, request, granted: principal.scopes }, requestId, shortfall.id));
    }

    if (modern) return serveModernRequest(deps, ctx, { request: webReq, body: read.body, authInfo: auth.authInfo, principal, requestId, started });

    const record = new CallRecord();
    const server = createMcpServer({ deps, record, requestId });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(webReq, { authInfo: auth.authInfo, parsedBody: read.body });
      const text = await response.text();
      let responseBody = parseJson(text);
      if (response.status >= 400) {
        const refusal = transportRefusal(response.status, responseBody, requestId);
        deps.logger.info('mcp rejected', { requestId, status: refusal.status, reason: refusal.body.error.message });
        return send(ctx, refusal);
      }
      if (responseBody !== undefined) {
        const cleaned = cleanRpcErrors(read.body, responseBody, requestId);
        for (const error of cleaned.internal) deps.logger.error('mcp internal error', { requestId, borrowerId: principal.borrowerId, error });
        responseBody = cleaned.body;
        ctx.type = 'application/json';
        ctx.body = JSON.stringify(responseBody);
      } else {
        ctx.body = text || null;
      }
      // After the body: Koa turns a null body into 204, and MCP wants 202 for notifications.
      ctx.status = response.status;
      logMcpCalls(deps.logger, { requestId, principal, latencyMs: Math.round(performance.now() - started) }, read.body, responseBody, record, deps.metrics?.api);
    } catch (err) {
      deps.logger.error('mcp request failed', { requestId, borrowerId: principal.borrowerId, error: err });
      send(ctx, internalError(requestId));
    } finally {
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    }
  };
}
