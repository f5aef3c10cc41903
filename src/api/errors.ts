import type { Context, Next } from 'koa';
import { ApiError } from '../domain/errors.js';
import type { Logger } from '../observability/logger.js';

/** The one error shape. Unknown failures become 500 INTERNAL with no detail beyond the request id. */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw ApiError.notFound('route');
    } catch (err) {
      const apiError = err instanceof ApiError ? err : null;
      if (!apiError) {
        logger.error('request failed', { requestId: ctx.state.requestId, path: ctx.path, error: err });
      }
      const e = apiError ?? ApiError.internal();
      ctx.status = e.status;
      for (const [k, v] of Object.entries(e.headers ?? {})) ctx.set(k, v);
      ctx.body = e.toBody(ctx.state.requestId as string);
    }
  };
}
