import { NEXT_ONBOARDING_STEP, onboardingShortfall, stageOfScopes, type ToolName } from '@credit-facilitator/wire/onboarding';

/**
 * HTTP-level refusals at /mcp. Every non-2xx body there is a JSON-RPC error (what MCP clients
 * parse): `{"jsonrpc":"2.0","id":null,"error":{"code",message,"data":{"code":<our code>,"requestId",...}}}`.
 */
export interface McpHttpError {
  status: number;
  headers: Record<string, string>;
  body: { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data: Record<string, unknown> } };
}

/** The `data.code` of every non-2xx answer at /mcp (docs/agent-side.md). */
export const MCP_HTTP_ERROR_CODES = [
  'UNAUTHENTICATED', 'INSUFFICIENT_SCOPE', 'FORBIDDEN', 'METHOD_NOT_ALLOWED', 'NOT_ACCEPTABLE', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'HEADERS_TOO_LARGE',
  'INVALID_REQUEST', 'METHOD_NOT_FOUND', 'UNAVAILABLE', 'INTERNAL',
] as const;
export type McpHttpErrorCode = (typeof MCP_HTTP_ERROR_CODES)[number];

/** JSON-RPC's reserved server-error code for refusals that are not about the message itself. */
const SERVER_ERROR = -32000;
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

const quote = (v: string) => `"${v.replace(/["\\]/g, '\\$&')}"`;

/** `Bearer k="v", ...` in the given order. */
export function bearerChallenge(params: Record<string, string | undefined>): string {
  const parts = Object.entries(params)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => `${k}=${quote(v)}`);
  return parts.length ? `Bearer ${parts.join(', ')}` : 'Bearer';
}

export function mcpHttpError(
  status: number,
  code: McpHttpErrorCode,
  message: string,
  requestId: string,
  opts: { headers?: Record<string, string>; data?: Record<string, unknown>; rpcCode?: number; id?: string | number | null } = {},
): McpHttpError {
  return {
    status,
    headers: opts.headers ?? {},
    body: { jsonrpc: '2.0', id: opts.id ?? null, error: { code: opts.rpcCode ?? SERVER_ERROR, message, data: { ...opts.data, code, requestId } } },
  };
}

/** 401: no token, or one we cannot accept. RFC 6750 §3.1: error="invalid_token" only when a token was sent. */
export function unauthorized(resourceMetadata: string, tokenPresented: boolean, requestId: string): McpHttpError {
  const message = tokenPresented
    ? 'The bearer token is invalid, expired, revoked or not issued for this resource. Obtain a new borrower token.'
    : 'Send a borrower access token as Authorization: Bearer <token>; see resource_metadata for the authorization server.';
  const challenge = bearerChallenge({
    resource_metadata: resourceMetadata,
    ...(tokenPresented ? { error: 'invalid_token', error_description: 'token invalid, expired, revoked or for another resource' } : {}),
  });
  return mcpHttpError(401, 'UNAUTHENTICATED', message, requestId, {
    headers: { 'WWW-Authenticate': challenge },
    data: { resource_metadata: resourceMetadata, ...(tokenPresented ? { oauth_error: 'invalid_token' } : {}) },
  });
}

/**
 * 403 insufficient_scope (RFC 6750 §3.1): the challenge's `scope` is what to request (stepUpScopes:
 * the tool's scopes with those already granted); `data.scope` lists every scope the tool needs.
 */
export function insufficientScope(
  resourceMetadata: string,
  shortfall: { tool: ToolName; needed: readonly string[]; missing: readonly string[]; request: readonly string[]; granted: readonly string[] },
  requestId: string,
  id: string | number | null,
): McpHttpError {
  const { tool, needed, missing, request } = shortfall;
  const description = `${tool} needs scope ${needed.join(' ')}`;
  // A token carries its stage's scopes, so they tell which onboarding step opens the tool.
  const stage = stageOfScopes(shortfall.granted);
  const why = onboardingShortfall(tool, stage);
  const then = why ? `; ${why}, then refresh the token and retry.` : '. Request it (re-authorise or refresh after onboarding advances) and retry.';
  return mcpHttpError(403, 'INSUFFICIENT_SCOPE', `This token lacks the scope ${missing.join(' ')} needed by ${tool}${then}`, requestId, {
    id,
    headers: {
      'WWW-Authenticate': bearerChallenge({ error: 'insufficient_scope', scope: request.join(' '), resource_metadata: resourceMetadata, error_description: description }),
    },
    data: { oauth_error: 'insufficient_scope', tool, scope: needed.join(' '), missing_scopes: [...missing], token_stage: stage, ...(why ? { next_step: NEXT_ONBOARDING_STEP[stage] } : {}) },
  });
}

/** 403: a browser page on an origin that is neither ours nor allowed (the transport's DNS-rebinding check). */
export function forbiddenOrigin(origin: string, requestId: string): McpHttpError {
  const shown = origin.slice(0, 200);
  return mcpHttpError(403, 'FORBIDDEN', `Requests from the origin ${JSON.stringify(shown)} may not use this endpoint: it is neither this server's origin nor an allowed one.`, requestId, {
    headers: { 'Cache-Control': 'no-store' },
    data: { origin: shown },
  });
}

export function methodNotAllowed(requestId: string): McpHttpError {
  return mcpHttpError(405, 'METHOD_NOT_ALLOWED', 'This endpoint is stateless: send JSON-RPC messages with POST.', requestId, {
    headers: { Allow: 'POST' },
  });
}

export function payloadTooLarge(limitBytes: number, requestId: string): McpHttpError {
  return mcpHttpError(413, 'PAYLOAD_TOO_LARGE', `The body exceeds ${limitBytes} bytes.`, requestId, { data: { limitBytes } });
}

export function unsupportedMediaType(requestId: string): McpHttpError {
  return mcpHttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.', requestId);
}

export function parseError(requestId: string): McpHttpError {
  return mcpHttpError(400, 'INVALID_REQUEST', 'Parse error: the body is not valid JSON.', requestId, { rpcCode: PARSE_ERROR });
}

/** A JSON body JSON-RPC cannot take as a request (JSON-RPC "Invalid Request"). */
export function invalidRequest(message: string, requestId: string): McpHttpError {
  return mcpHttpError(400, 'INVALID_REQUEST', message, requestId, { rpcCode: INVALID_REQUEST });
}

/** 503: a dependency (the store, Temporal) is away or busy for a moment; the same request can be sent again. */
export function unavailable(requestId: string, retryAfterSeconds = 1): McpHttpError {
  return mcpHttpError(503, 'UNAVAILABLE', 'A dependency is briefly unavailable. Retry after the Retry-After delay.', requestId, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

export function internalError(requestId: string): McpHttpError {
  return mcpHttpError(500, 'INTERNAL', 'An internal error occurred. Retry later; quote the requestId if it persists.', requestId);
}

/** The 2026-07-28 revision's UnsupportedProtocolVersion code (HTTP 400). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/**
 * 400 for an `MCP-Protocol-Version` we do not speak, in the form the 2026-07-28 revision defines
 * (-32022, `data.supported` and `data.requested`), answered to the request's own id: a v2 client
 * negotiating its era reads the list and falls back to `initialize` with a version we support.
 */
export function unsupportedProtocolVersion(requested: string, supported: readonly string[], requestId: string, id: string | number | null): McpHttpError {
  return mcpHttpError(400, 'INVALID_REQUEST', `Unsupported protocol version: ${requested.slice(0, 40)}. Supported: ${supported.join(', ')}.`, requestId, {
    id,
    rpcCode: UNSUPPORTED_PROTOCOL_VERSION,
    data: { supported: [...supported], requested: requested.slice(0, 40) },
  });
}
