import { Agent, request as httpRequest } from 'node:http';
import { z } from 'zod';
import { TOOL_ERROR_CODES } from '../../src/domain/tool-errors.js';
import { ERROR_STATUS, type ErrorCode } from '../../src/domain/errors.js';
import { ErrorBodySchema } from '../../src/api/facilitator/response-schemas.js';
import { MCP_HTTP_ERROR_CODES } from '../../src/http/mcp-errors.js';
import type { ToolDefinition } from '../../src/mcp/tools/define.js';

/**
 * What every answer at an edge must look like, whatever was sent: never a 5xx, one documented
 * error shape, no stack trace or internal text. Each check throws with the case attached, so
 * fast-check reports (and shrinks) the request that broke it.
 */

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export interface RawRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Reused connections: a fresh TCP connection per case would cost both ends more than the case. */
const agent = new Agent({ keepAlive: true, maxSockets: 32 });

/** Sends exactly these headers and bytes with node:http (fetch refuses odd but legal header values, such as trailing spaces). */
export function send(req: RawRequest): Promise<RawAnswer> {
  const withBody = req.body !== undefined && req.method !== 'GET' && req.method !== 'HEAD';
  const body = withBody ? Buffer.from(req.body as string, 'utf8') : undefined;
  return new Promise((resolve, reject) => {
    const r = httpRequest(req.url, { method: req.method, headers: { ...req.headers, ...(body ? { 'content-length': String(body.length) } : {}) }, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve({ status: res.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** Stack frames, file paths, driver and runtime error names: what a leaked exception looks like. */
const LEAK = /\n\s+at\s|\bat [\w.<>$]+ \((?:file|node):|node_modules|\/src\/|\/dist\/|\.[tj]s:\d+|Mongo\w*Error|E11000|\b(?:TypeError|RangeError|SyntaxError|ReferenceError|ZodError|BSONError)\b|Cannot (?:read|convert|set) |is not a function|Maximum call stack|Unexpected token|\bJSON at position/;

export class FuzzFailure extends Error {
  override readonly name = 'FuzzFailure';
}

function fail(what: string, req: unknown, a: RawAnswer): never {
  const sent = JSON.stringify(req, (_k, v: unknown) => (typeof v === 'string' && v.length > 300 ? `${v.slice(0, 300)}...(${v.length} chars)` : v));
  throw new FuzzFailure(`${what}\n  request: ${sent}\n  answer: ${a.status} ${a.text.slice(0, 600)}`);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

const FieldIssue = z.strictObject({ path: z.string(), message: z.string() });

/**
 * The one REST error body (ErrorBodySchema, what OpenAPI documents), strictly: no key it does not
 * name, a message that says something, a request id of ours, and whole base units.
 */
const RestErrorBody = z.strictObject({
  error: z.strictObject({
    ...ErrorBodySchema.shape.error.shape,
    message: z.string().min(1),
    requestId: z.string().regex(/^req_[0-9a-f-]{36}$/),
    fields: z.array(FieldIssue).optional(),
    refundable: z.string().regex(/^[0-9]+$/).optional(),
  }),
});
export type RestErrorBody = z.infer<typeof RestErrorBody>;

/** Documented departures of one edge from the shared code table (e.g. the borrower pages' 409 INVALID_REQUEST). */
export interface RestCheckOptions {
  /** Statuses a code may also answer with. */
  alsoStatus?: Partial<Record<ErrorCode, readonly number[]>>;
  /** A cookie session, not a bearer credential: a 401 carries no Bearer challenge. */
  sessionCookie?: boolean;
}

/** What every JSON edge answers: never a 5xx, no internal text, JSON; `success` when it is a 2xx matching `ok`. */
function checkJsonAnswer(req: RawRequest, a: RawAnswer, ok: z.ZodType): { success: boolean; json: unknown } {
  if (a.status >= 500) fail('5xx answer', req, a);
  if (LEAK.test(a.text)) fail('internal text in the answer', req, a);
  const parsed = parseJson(a.text);
  if (!parsed.ok) fail('answer is not JSON', req, a);
  if (a.status < 200 || a.status >= 300) return { success: false, json: parsed.value };
  const r = ok.safeParse(parsed.value);
  if (!r.success) fail(`2xx body does not match its schema: ${r.error.message}`, req, a);
  return { success: true, json: parsed.value };
}

/** Never a 5xx; a non-2xx is the error shape with a documented code and its status; a 2xx matches `ok`. */
export function checkRestAnswer(req: RawRequest, a: RawAnswer, ok: z.ZodType, opts: RestCheckOptions = {}): { code?: ErrorCode; json: unknown } {
  const body = checkJsonAnswer(req, a, ok);
  if (body.success) return { json: body.json };
  const e = RestErrorBody.safeParse(body.json);
  if (!e.success) fail(`non-2xx body is not the error shape: ${e.error.message}`, req, a);
  const { code, requestId } = e.data.error;
  if (ERROR_STATUS[code] !== a.status && !opts.alsoStatus?.[code]?.includes(a.status)) fail(`code ${code} answered with status ${a.status}`, req, a);
  if (a.headers.get('x-request-id') !== requestId) fail('requestId differs from X-Request-Id', req, a);
  if (!(a.headers.get('content-type') ?? '').startsWith('application/json')) fail('error answer is not application/json', req, a);
  if (code === 'RATE_LIMITED' && !a.headers.get('retry-after')) fail('429 without Retry-After', req, a);
  if (code === 'UNAUTHENTICATED' && !opts.sessionCookie && !(a.headers.get('www-authenticate') ?? '').startsWith('Bearer')) fail('401 without WWW-Authenticate: Bearer', req, a);
  if (code === 'PAYMENT_REJECTED' && !e.data.error.invalidReason) fail('422 without invalidReason', req, a);
  return { code, json: body.json };
}

// ---------------------------------------------------------------- MCP

const RpcId = z.union([z.string(), z.number(), z.null()]);

/** /mcp's own non-2xx answers (docs/agent-side.md): a JSON-RPC error whose data names our code and the request. */
const McpHttpErrorBody = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: RpcId,
  error: z.strictObject({
    code: z.number().int(),
    message: z.string().min(1),
    data: z.looseObject({ code: z.enum(MCP_HTTP_ERROR_CODES), requestId: z.string().regex(/^req_/) }),
  }),
});

const RpcResult = z.strictObject({ jsonrpc: z.literal('2.0'), id: RpcId, result: z.record(z.string(), z.unknown()) });
const RpcError = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: RpcId,
  error: z.strictObject({ code: z.number().int(), message: z.string().min(1), data: z.unknown().optional() }),
});
const RpcResponse = z.union([RpcResult, RpcError]);

/** A tool failure's text: our ToolError JSON (src/domain/tool-errors.ts). */
const ToolErrorText = z.strictObject({
  error: z.looseObject({ code: z.enum([...TOOL_ERROR_CODES, 'INSUFFICIENT_SCOPE']), message: z.string().min(1) }),
});

/**
 * The SDK's refusal of arguments that do not match the tool's input schema (documented in
 * docs/agent-side.md); the v2 server (2026-07-28) words it without the `MCP error -32602: ` prefix.
 */
const SDK_INPUT_ERROR = /^(MCP error -32602: )?Input validation error: Invalid arguments for tool [a-z_0-9]+: /;
const SDK_UNKNOWN_TOOL = /^(MCP error -32602: )?Tool .* not found$/s;

const JSON_RPC_INTERNAL_ERROR = -32603;

export interface McpOutcome {
  /** Per JSON-RPC id: 'ok', a tool error code, 'input_validation', or 'rpc:<code>'. */
  outcomes: Map<string | number | null, string>;
  /** Structured results of successful tool calls, by id. */
  results: Map<string | number | null, Record<string, unknown>>;
  httpCode?: string;
}

function checkToolResult(req: unknown, a: RawAnswer, result: Record<string, unknown>, tool: ToolDefinition | undefined): { outcome: string; structured?: Record<string, unknown> } {
  const content = result.content;
  if (!Array.isArray(content)) fail('tool result without content', req, a);
  const text = content.map((c: { text?: unknown }) => (typeof c.text === 'string' ? c.text : '')).join('\n');
  if (result.isError === true) {
    if (result.structuredContent !== undefined) fail('tool error carries structuredContent', req, a);
    if (SDK_INPUT_ERROR.test(text)) return { outcome: 'input_validation' };
    if (!tool && SDK_UNKNOWN_TOOL.test(text)) return { outcome: 'unknown_tool' };
    const parsed = parseJson(text);
    const e = parsed.ok ? ToolErrorText.safeParse(parsed.value) : null;
    if (!e?.success) fail(`tool error text is neither a ToolError nor the SDK input error: ${text.slice(0, 300)}`, req, a);
    const reason = e.data.error.reason;
    return { outcome: typeof reason === 'string' ? `${e.data.error.code}:${reason}` : e.data.error.code };
  }
  if (tool?.outputSchema) {
    const r = tool.outputSchema.safeParse(result.structuredContent);
    if (!r.success) fail(`${tool.name} result does not match its output schema: ${r.error.message}`, req, a);
  }
  return { outcome: 'ok', structured: result.structuredContent as Record<string, unknown> };
}

/**
 * An /mcp answer: never a 5xx; non-2xx in our JSON-RPC error shape; a 200 holds well-formed
 * JSON-RPC responses, none an internal error, tool failures in the documented tool-error shape.
 * `tools` maps the ids of tools/call requests to the tool they call.
 */
export function checkMcpAnswer(req: RawRequest, a: RawAnswer, tools: Map<string | number, ToolDefinition | undefined> = new Map()): McpOutcome {
  const out: McpOutcome = { outcomes: new Map(), results: new Map() };
  if (a.status >= 500) fail('5xx answer', req, a);
  if (LEAK.test(a.text)) fail('internal text in the answer', req, a);
  if (a.status === 202) {
    if (a.text !== '') fail('202 with a body', req, a);
    return out;
  }
  const parsed = parseJson(a.text);
  if (!parsed.ok) fail('answer is not JSON', req, a);
  if (a.status !== 200) {
    const e = McpHttpErrorBody.safeParse(parsed.value);
    if (!e.success) fail(`non-2xx body is not the /mcp error shape: ${e.error.message}`, req, a);
    if (e.data.error.data.code === 'INTERNAL') fail('INTERNAL error', req, a);
    out.httpCode = e.data.error.data.code;
    return out;
  }
  const responses = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  for (const r of responses) {
    const p = RpcResponse.safeParse(r);
    if (!p.success) fail(`not a JSON-RPC response: ${p.error.message}`, req, a);
    const msg = p.data;
    if ('error' in msg) {
      if (msg.error.code === JSON_RPC_INTERNAL_ERROR) fail('JSON-RPC internal error', req, a);
      out.outcomes.set(msg.id, `rpc:${msg.error.code}`);
      continue;
    }
    const isToolResult = Array.isArray(msg.result.content);
    const tool = msg.id === null ? undefined : tools.get(msg.id);
    if (!isToolResult) {
      if (tool) fail('a tools/call answered without a tool result', req, a);
      out.outcomes.set(msg.id, 'ok');
      continue;
    }
    const { outcome, structured } = checkToolResult(req, a, msg.result, tool);
    out.outcomes.set(msg.id, outcome);
    if (structured) out.results.set(msg.id, structured);
  }
  return out;
}

/** Counts of outcomes, printed after a run and checked for coverage. */
export class Tally {
  readonly counts = new Map<string, number>();
  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  has(key: string): boolean {
    return (this.counts.get(key) ?? 0) > 0;
  }
  /** The fuzz reached each of these outcomes (skipped when replaying one reported case). */
  assertReached(keys: readonly string[]): void {
    if (process.env.FUZZ_PATH !== undefined) return;
    const missing = keys.filter((k) => !this.has(k));
    if (missing.length) throw new Error(`the fuzz never reached ${missing.join(', ')} (outcomes: ${this.toString()})`);
  }
  get total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }
  toString(): string {
    return [...this.counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}=${n}`).join(' ');
  }
}

// ---------------------------------------------------------------- OAuth (oidc-provider's own edges)

/** The OAuth error codes an answer may carry; server_error is never a client's mistake. */
const OAUTH_ERRORS = new Set([
  'invalid_request', 'invalid_client', 'invalid_client_metadata', 'invalid_redirect_uri', 'invalid_scope', 'invalid_target', 'invalid_grant',
  'unauthorized_client', 'unsupported_response_type', 'unsupported_response_mode', 'access_denied', 'rate_limited', 'temporarily_unavailable',
  'request_not_supported', 'request_uri_not_supported', 'registration_not_supported', 'invalid_request_object', 'login_required', 'consent_required',
]);

const OAuthJsonError = z.looseObject({ error: z.string(), error_description: z.string().min(1) });

/** A JSON OAuth answer (RFC 6749 §5.2, RFC 7591 §3.2.2): a 2xx matches `ok`; otherwise a 4xx `{error, error_description}`. */
export function checkOAuthJsonAnswer(req: RawRequest, a: RawAnswer, ok: z.ZodType): { error?: string; json: unknown } {
  const body = checkJsonAnswer(req, a, ok);
  if (body.success) return { json: body.json };
  const e = OAuthJsonError.safeParse(body.json);
  if (!e.success) fail(`non-2xx body is not an OAuth error: ${e.error.message}`, req, a);
  if (!OAUTH_ERRORS.has(e.data.error)) fail(`unknown OAuth error ${e.data.error}`, req, a);
  if (!(a.headers.get('content-type') ?? '').startsWith('application/json')) fail('error answer is not application/json', req, a);
  if (a.status === 429 && !a.headers.get('retry-after')) fail('429 without Retry-After', req, a);
  return { error: e.data.error, json: body.json };
}

/**
 * An answer of the authorization endpoint: a redirect to our sign-in (an interaction) or, with
 * an error, to a redirect URI the client registered; otherwise an error page naming the OAuth
 * error. Never a redirect anywhere else. Returns the outcome: 'interaction', 'redirect:<error>' or 'page:<error>'.
 */
export function checkAuthorizationAnswer(req: RawRequest, a: RawAnswer, opts: { origin: string; registeredRedirects: readonly string[] }): string {
  if (a.status >= 500) fail('5xx answer', req, a);
  if (LEAK.test(a.text)) fail('internal text in the answer', req, a);
  if (a.status >= 300 && a.status < 400) {
    const location = a.headers.get('location');
    if (!location) fail('redirect without Location', req, a);
    const to = URL.parse(location, opts.origin);
    if (!to) fail('unparseable Location', req, a);
    if (to.origin === opts.origin && to.pathname.startsWith('/oauth/interaction/')) return 'interaction';
    const target = `${to.origin}${to.pathname}`;
    if (!opts.registeredRedirects.includes(target)) fail(`redirect to ${location}, not a registered redirect URI`, req, a);
    // response_mode fragment (e.g. response_type=token) carries the error after '#'.
    const error = to.searchParams.get('error') ?? new URLSearchParams(to.hash.slice(1)).get('error');
    if (!error || !OAUTH_ERRORS.has(error)) fail(`redirect to the client without a known OAuth error: ${location}`, req, a);
    return `redirect:${error}`;
  }
  if (a.status === 429) {
    if (!a.headers.get('retry-after')) fail('429 without Retry-After', req, a);
    return '429';
  }
  if (a.status !== 400) fail(`unexpected status ${a.status}`, req, a);
  if (!(a.headers.get('content-type') ?? '').startsWith('text/html')) fail('error page is not text/html', req, a);
  const error = /<p class="error">([a-z_]+): /.exec(a.text)?.[1];
  if (!error || !OAUTH_ERRORS.has(error)) fail('error page names no known OAuth error', req, a);
  return `page:${error}`;
}
