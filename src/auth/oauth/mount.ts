import type { Context, Next } from 'koa';
import type Provider from 'oidc-provider';

import { OAUTH_PREFIX } from '../../http/mount-points.js';
export { OAUTH_PREFIX };
const INTERACTION_PREFIX = `${OAUTH_PREFIX}/interaction/`;
const DISCOVERY = '/.well-known/openid-configuration';
/** RFC 8414 §3 and the OIDC variant with the issuer path appended, as the MCP SDK client tries them. */
const ROOT_METADATA_PATHS = new Set([`/.well-known/oauth-authorization-server${OAUTH_PREFIX}`, `${DISCOVERY}${OAUTH_PREFIX}`]);

export const PROVIDER_CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'";

/**
 * Hands /oauth/* (except the sign-in pages under /oauth/interaction/, which are ours) to
 * oidc-provider with the prefix stripped, and answers the root well-known metadata URLs with
 * the provider's discovery document. oidc-provider derives its mount path from
 * req.originalUrl minus req.url, so every URL it emits keeps the /oauth prefix.
 * Mount it before the JSON error middleware: the provider writes its own responses and errors.
 */
export function oauthProviderMiddleware(provider: Provider, opts: { guardRegistration?: (ctx: Context) => Promise<boolean> } = {}) {
  const handle = provider.callback();
  return async (ctx: Context, next: Next) => {
    const { path } = ctx;
    const query = ctx.querystring ? `?${ctx.querystring}` : '';
    let innerPath: string | undefined;
    if (ROOT_METADATA_PATHS.has(path)) innerPath = DISCOVERY;
    else if ((path === OAUTH_PREFIX || path.startsWith(`${OAUTH_PREFIX}/`)) && !path.startsWith(INTERACTION_PREFIX)) {
      innerPath = path.slice(OAUTH_PREFIX.length) || '/';
    }
    if (innerPath === undefined) return next();
    if (innerPath === '/reg' && ctx.method === 'POST' && opts.guardRegistration && (await opts.guardRegistration(ctx))) {
      ctx.respond = false;
      return;
    }
    // Every page oidc-provider renders (error pages, form_post) may not be framed and runs no
    // script but its own: form_post adds the hash of its inline script to script-src.
    ctx.res.setHeader('Content-Security-Policy', PROVIDER_CSP);
    ctx.res.setHeader('X-Frame-Options', 'DENY');
    ctx.res.setHeader('X-Content-Type-Options', 'nosniff');

    const req = ctx.req as typeof ctx.req & { originalUrl?: string };
    const outerUrl = req.url;
    req.originalUrl = `${OAUTH_PREFIX}${innerPath}${query}`;
    req.url = `${innerPath}${query}`;
    ctx.respond = false;
    try {
      await handle(req, ctx.res);
    } finally {
      // Middleware outside this one (metrics, logs) sees the path the client asked for.
      req.url = outerUrl;
    }
  };
}
