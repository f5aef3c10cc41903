import type { Context, Next } from 'koa';
import { OAUTH_PREFIX } from './mount-points.js';
import { isLoopbackOrigin } from '../domain/redirect-policy.js';
import { corsAllowedOrigins, type Env } from '../config/env.js';

/** Which browser origins may read our answers: MCP_CORS_ORIGINS, plus every loopback origin in development. */
export interface CorsPolicy {
  allows(origin: string | undefined): boolean;
}

export function corsPolicy(env: Env): CorsPolicy {
  const listed = new Set(corsAllowedOrigins(env));
  const loopback = env.NODE_ENV === 'development';
  return { allows: (origin) => !!origin && (listed.has(origin) || (loopback && isLoopbackOrigin(origin))) };
}

/** The request headers the MCP transport (2026-07-28 adds Mcp-Method and Mcp-Name) and the OAuth client send that are not CORS-safelisted. */
export const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID';
/** The answer headers an MCP client reads: the session, the negotiated version and the auth challenge. */
export const CORS_EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/** POST endpoints of the authorization server a browser-hosted client uses (token, registration, revocation). */
const OAUTH_BROWSER_ENDPOINTS = new Set([`${OAUTH_PREFIX}/token`, `${OAUTH_PREFIX}/reg`, `${OAUTH_PREFIX}/token/revocation`]);

/**
 * The methods a browser page on an allowed origin may use on `path`, or undefined for paths not
 * open to browsers (the merchant REST API, the sign-in pages, everything else).
 */
export function corsMethods(path: string): string | undefined {
  if (path === '/mcp') return 'GET, POST, DELETE';
  if (path.startsWith('/.well-known/') || path.startsWith(`${OAUTH_PREFIX}/.well-known/`)) return 'GET';
  if (OAUTH_BROWSER_ENDPOINTS.has(path)) return 'POST';
  return undefined;
}

function removeCorsHeaders(ctx: Context): void {
  for (const name of Object.keys(ctx.response.headers)) if (name.toLowerCase().startsWith('access-control-')) ctx.remove(name);
}

/**
 * CORS for browser-hosted MCP clients. An allowed Origin is echoed (never `*`, and no credentials
 * mode: the bearer token is a header, not a cookie); a preflight from an allowed origin is answered
 * here with 204; any other origin gets no Access-Control-* header at all, so the browser withholds
 * the answer. Authentication is untouched: a preflight carries no credentials and reaches no handler,
 * and every real request still passes the Host guard (mounted before this) and the bearer checks.
 */
export function corsMiddleware(policy: CorsPolicy) {
  return async (ctx: Context, next: Next) => {
    const methods = corsMethods(ctx.path);
    if (!methods) return next();
    ctx.vary('Origin');
    const origin = ctx.get('origin') || undefined;
    const allowed = policy.allows(origin);
    const preflight = ctx.method === 'OPTIONS' && ctx.get('access-control-request-method') !== '';
    if (preflight) {
      if (allowed) {
        ctx.set('Access-Control-Allow-Origin', origin!);
        ctx.set('Access-Control-Allow-Methods', methods);
        ctx.set('Access-Control-Allow-Headers', CORS_ALLOW_HEADERS);
        ctx.set('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
      }
      ctx.status = 204;
      return;
    }
    if (allowed) {
      ctx.set('Access-Control-Allow-Origin', origin!);
      ctx.set('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
    }
    return next();
  };
}

/**
 * Mounted inside oidc-provider: its own CORS echoes any Origin on discovery, JWKS and preflights.
 * After it ran, Access-Control-* headers are dropped unless the origin is one we allow, so the
 * authorization server follows the same list as /mcp.
 */
export function providerCorsFilter(policy: CorsPolicy) {
  return async (ctx: Context, next: Next) => {
    await next();
    if (!policy.allows(ctx.get('origin') || undefined)) removeCorsHeaders(ctx);
  };
}
