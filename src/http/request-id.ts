import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';

export async function requestIdMiddleware(ctx: Context, next: Next) {
  ctx.state.requestId = `req_${randomUUID()}`;
  ctx.set('X-Request-Id', ctx.state.requestId as string);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  await next();
}
