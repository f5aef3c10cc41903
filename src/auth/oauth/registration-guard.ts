import type { Context } from 'koa';
import type { AuthDeps } from '../deps.js';
import { consumeRate } from '../../store/rate-limits.js';
import { inSeconds } from '../../domain/errors.js';

/**
 * What POST /oauth/reg checks before oidc-provider sees the document (RFC 7591): a per-address
 * rate limit, a size cap on the body and on every field, and the JSON type of every metadata field,
 * so a malformed document is a 400 invalid_client_metadata and never reaches code that assumes types.
 */
export const MAX_REGISTRATION_BYTES = 8 * 1024;
const MAX_STRING = 1024;
const MAX_NAME = 200;
const MAX_ITEMS = 10;

/** Public clients only: no client secret, no private_key_jwt (the AS metadata lists this method alone). */
export const PUBLIC_CLIENT_AUTH_METHOD = 'none';

const STRING_FIELDS = new Set([
  'client_name', 'client_uri', 'logo_uri', 'policy_uri', 'tos_uri', 'application_type', 'token_endpoint_auth_method',
  'scope', 'software_id', 'software_version', 'subject_type', 'id_token_signed_response_alg',
]);
const STRING_ARRAY_FIELDS = new Set(['redirect_uris', 'grant_types', 'response_types', 'response_modes', 'contacts', 'default_acr_values']);
const NUMBER_FIELDS = new Set(['default_max_age']);
const BOOLEAN_FIELDS = new Set(['require_auth_time']);
/**
 * URIs the server would fetch (jwks_uri, sector_identifier_uri), redirect to (post_logout_redirect_uris,
 * initiate_login_uri) or that only confidential clients need: public clients with PKCE use none of them.
 */
const REFUSED_FIELDS = new Set([
  'jwks_uri', 'jwks', 'sector_identifier_uri', 'initiate_login_uri', 'post_logout_redirect_uris', 'request_uris',
  'backchannel_logout_uri', 'frontchannel_logout_uri', 'software_statement',
]);

export class RegistrationProblem extends Error {
  constructor(
    readonly error: 'invalid_client_metadata' | 'invalid_request',
    message: string,
  ) {
    super(message);
  }
}

/** null when `doc` is a registration document of the right shape, else what is wrong with it. Pure. */
export function registrationDocumentProblem(doc: unknown): string | null {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return 'the registration document must be a JSON object';
  for (const [key, value] of Object.entries(doc)) {
    if (value === null || value === undefined) continue;
    if (REFUSED_FIELDS.has(key)) return `${key} is not supported; register a public client (token_endpoint_auth_method "none") with redirect_uris only`;
    if (STRING_FIELDS.has(key)) {
      if (typeof value !== 'string') return `${key} must be a string`;
      if (key === 'token_endpoint_auth_method' && value !== PUBLIC_CLIENT_AUTH_METHOD) {
        return `token_endpoint_auth_method ${JSON.stringify(value.slice(0, 40))} is not supported; only public clients ("none", with PKCE S256) may register`;
      }
      const max = key === 'client_name' ? MAX_NAME : MAX_STRING;
      if (value.length > max) return `${key} is longer than ${max} characters`;
    } else if (STRING_ARRAY_FIELDS.has(key)) {
      if (!Array.isArray(value)) return `${key} must be an array of strings`;
      if (value.length > MAX_ITEMS) return `${key} has more than ${MAX_ITEMS} entries`;
      for (const item of value) {
        if (typeof item !== 'string') return `${key} must be an array of strings`;
        if (item.length > MAX_STRING) return `${key} has an entry longer than ${MAX_STRING} characters`;
      }
    } else if (NUMBER_FIELDS.has(key)) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) return `${key} must be a non-negative integer`;
    } else if (BOOLEAN_FIELDS.has(key)) {
      if (typeof value !== 'boolean') return `${key} must be a boolean`;
    } else if (typeof value === 'string') {
      // Fields oidc-provider does not recognise are dropped by it; they still may not be large.
      if (value.length > MAX_STRING) return `${key} is longer than ${MAX_STRING} characters`;
    } else if (typeof value === 'object') {
      return `${key} is not a recognised client metadata field and must not be an object or array`;
    }
  }
  return null;
}

async function readCapped(ctx: Context): Promise<Buffer> {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > MAX_REGISTRATION_BYTES) throw new RegistrationProblem('invalid_client_metadata', `the registration document is larger than ${MAX_REGISTRATION_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of ctx.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > MAX_REGISTRATION_BYTES) throw new RegistrationProblem('invalid_client_metadata', `the registration document is larger than ${MAX_REGISTRATION_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, received);
}

function oauthError(ctx: Context, status: number, error: string, description: string, headers: Record<string, string> = {}): void {
  ctx.res.statusCode = status;
  ctx.res.setHeader('Content-Type', 'application/json; charset=utf-8');
  ctx.res.setHeader('Cache-Control', 'no-store');
  for (const [k, v] of Object.entries(headers)) ctx.res.setHeader(k, v);
  ctx.res.end(JSON.stringify({ error, error_description: description }));
}

/**
 * Runs before oidc-provider on POST /oauth/reg. Returns true when the request was answered here;
 * otherwise the checked document is left on req.body, where oidc-provider's body parser takes it.
 */
export async function guardRegistration(deps: AuthDeps, ctx: Context): Promise<boolean> {
  const { env } = deps;
  let d: Awaited<ReturnType<typeof consumeRate>>;
  try {
    d = await consumeRate(deps.store.c, `oauth-reg:${ctx.ip}`, { perMinute: env.OAUTH_DCR_PER_MIN, burst: env.OAUTH_DCR_BURST }, deps.nowMs());
  } catch (err) {
    // This runs outside the JSON error middleware: answer as oidc-provider would, without detail.
    deps.logger.warn('registration rate limit unavailable', { requestId: ctx.state.requestId, error: err });
    oauthError(ctx, 503, 'temporarily_unavailable', 'registration is unavailable for a moment; retry shortly', { 'Retry-After': '1' });
    return true;
  }
  if (!d.allowed) {
    const retry = String(Math.max(1, d.retryAfterSeconds));
    oauthError(ctx, 429, 'rate_limited', `Too many client registrations from this address; retry after ${inSeconds(retry)}.`, { 'Retry-After': retry });
    return true;
  }
  if (!ctx.is('application/json')) {
    oauthError(ctx, 400, 'invalid_request', 'the registration document must be sent as application/json');
    return true;
  }
  let doc: unknown;
  try {
    const raw = await readCapped(ctx);
    try {
      doc = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new RegistrationProblem('invalid_client_metadata', 'the registration document is not valid JSON');
    }
    const problem = registrationDocumentProblem(doc);
    if (problem) throw new RegistrationProblem('invalid_client_metadata', problem);
  } catch (err) {
    if (!(err instanceof RegistrationProblem)) throw err;
    oauthError(ctx, 400, err.error, err.message);
    return true;
  }
  // RFC 7591's default would be client_secret_basic, and oidc-provider decides on a secret before
  // applying our default: name the public method, so a client that left it out gets no secret either.
  const document = doc as Record<string, unknown>;
  if (document.token_endpoint_auth_method === undefined || document.token_endpoint_auth_method === null) document.token_endpoint_auth_method = PUBLIC_CLIENT_AUTH_METHOD;
  (ctx.req as typeof ctx.req & { body?: unknown }).body = document;
  return false;
}
