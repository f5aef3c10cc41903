import type { Context, Next } from 'koa';
import { ApiError } from '../domain/errors.js';
import type { Logger } from '../observability/logger.js';
import { IdempotencyKeyBusy } from '../store/idempotency.js';
import { isTransientDependencyError } from './transient-errors.js';

/**
 * The one error shape. A dependency that is busy or away answers 503 with Retry-After; other
 * unknown failures become 500 INTERNAL with no detail beyond the request id.
 */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw ApiError.notFound('route');
    } catch (err) {
      const apiError = err instanceof ApiError ? err : err instanceof IdempotencyKeyBusy ? ApiError.idempotencyKeyInUse() : null;
      const transient = !apiError && isTransientDependencyError(err);
      if (transient) logger.warn('dependency unavailable', { requestId: ctx.state.requestId, path: ctx.path, error: err });
      else if (!apiError) logger.error('request failed', { requestId: ctx.state.requestId, path: ctx.path, error: err });
      const e = apiError ?? (transient ? ApiError.unavailable(1) : ApiError.internal());
      ctx.status = e.status;
      for (const [k, v] of Object.entries(e.headers ?? {})) ctx.set(k, v);
      ctx.body = e.toBody(ctx.state.requestId as string);
    }
  };
}
