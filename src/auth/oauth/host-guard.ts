import type { Context, Next } from 'koa';
import { publicHost, publicOrigin, type Env } from '../../config/env.js';
import { ApiError } from '../../domain/errors.js';
import { OAUTH_PREFIX } from './mount.js';

/** Routes whose answers embed or trust the origin: the authorization server, its metadata, and MCP. */
export function hostPinnedPath(path: string): boolean {
  return path === OAUTH_PREFIX || path.startsWith(`${OAUTH_PREFIX}/`) || path.startsWith('/.well-known/') || path === '/mcp' || path.startsWith('/mcp/');
}

/** host[:port] as a URL on `protocol` would print it (lower case, default port dropped), or null if it is no host. */
function normalizeHost(value: string, protocol: string): string | null {
  const url = URL.parse(`${protocol}//${value.trim()}`);
  if (!url || url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
  return url.host.toLowerCase();
}

/**
 * Refuses OAuth and MCP requests whose Host is not PUBLIC_ORIGIN's, so a forged Host cannot shape
 * the issuer, endpoints and form actions oidc-provider prints, and a DNS-rebound page on another
 * name cannot reach the MCP endpoint from a browser. Behind a proxy (PUBLIC_ORIGIN set) the first
 * X-Forwarded-Host, when present, is the host checked.
 */
export function hostGuard(env: Env) {
  const expected = publicHost(env);
  const protocol = new URL(publicOrigin(env)).protocol;
  const trustForwarded = env.PUBLIC_ORIGIN !== undefined;
  return async (ctx: Context, next: Next) => {
    if (!hostPinnedPath(ctx.path)) return next();
    const forwarded = trustForwarded ? ctx.get('x-forwarded-host').split(',')[0]?.trim() : '';
    const raw = forwarded || ctx.get('host');
    if (raw && normalizeHost(raw, protocol) === expected) return next();
    const e = ApiError.invalidRequest(
      [{ path: 'header.host', message: `must be ${expected}` }],
      `This server answers OAuth and MCP requests only for ${expected}; the request named ${JSON.stringify(raw)}.`,
    );
    ctx.status = e.status;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = e.toBody(ctx.state.requestId as string);
  };
}
