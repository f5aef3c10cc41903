import { isGrpcServiceError, ServiceError } from '@temporalio/client';
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
      const outage = !apiError && temporalUnreachable(err);
      if (outage) logger.warn('Temporal unreachable', { requestId: ctx.state.requestId, path: ctx.path, error: err });
      else if (!apiError) logger.error('request failed', { requestId: ctx.state.requestId, path: ctx.path, error: err });
      const e = apiError ?? (outage ? ApiError.unavailable() : ApiError.internal());
      ctx.status = e.status;
      for (const [k, v] of Object.entries(e.headers ?? {})) ctx.set(k, v);
      ctx.body = e.toBody(ctx.state.requestId as string);
    }
  };
}

const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

/**
 * Temporal down or restarting: a dependency outage (503, retry with the same Idempotency-Key), not a bug.
 * Mapped here, outside the handlers, so a capture keeps its claimed key and a retry resumes it.
 */
function temporalUnreachable(err: unknown): boolean {
  const grpc = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(grpc) && (grpc.code === GRPC_UNAVAILABLE || grpc.code === GRPC_DEADLINE_EXCEEDED);
}
