import type { Context, Next } from 'koa';
import { corsPolicy } from '../http/cors.js';
import { publicOrigin, type Env } from '../config/env.js';
import { forbiddenOrigin } from '../http/mcp-errors.js';

/**
 * The MCP transport's DNS-rebinding defence (2025-11-25 and 2026-07-28, "Servers MUST validate
 * the Origin header"): a request that carries an Origin other than PUBLIC_ORIGIN or one CORS
 * allows (MCP_CORS_ORIGINS, loopback in development) is 403 before auth, the body or any tool,
 * whatever its method or protocol version. No Origin (a non-browser client) passes.
 */
export function mcpOriginGuard(env: Env) {
  const own = publicOrigin(env);
  const cors = corsPolicy(env);
  return async (ctx: Context, next: Next) => {
    const origin = ctx.get('origin');
    if (origin === '' || origin === own || cors.allows(origin)) return next();
    const e = forbiddenOrigin(origin, ctx.state.requestId as string);
    ctx.status = e.status;
    for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
    ctx.body = e.body;
  };
}
