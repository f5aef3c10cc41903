import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';

/** A fresh request id, as every answer carries it (X-Request-Id, and an error body's requestId). */
export const newRequestId = (): string => `req_${randomUUID()}`;

/** The headers every answer carries beside its request id. */
export const COMMON_RESPONSE_HEADERS = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } as const;

export async function requestIdMiddleware(ctx: Context, next: Next) {
  ctx.state.requestId = newRequestId();
  ctx.set('X-Request-Id', ctx.state.requestId as string);
  ctx.set(COMMON_RESPONSE_HEADERS);
  await next();
}
