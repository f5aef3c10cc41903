import type { Context, Next } from 'koa';
import type { Logger } from '../observability/logger.js';

/** Path segments that look like ids or interaction handles are not worth a log line of their own. */
const maskIds = (path: string): string => path.replace(/\/[A-Za-z0-9_-]{16,}/g, '/:id');

/**
 * One JSON line per REST request: request id, route, status, latency, and the merchant and
 * workflow (= paymentId) it touched when known. Never headers or bodies, so never a credential.
 * /mcp logs its own line with the tool and borrower.
 */
export function accessLog(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      if (!ctx.path.startsWith('/mcp') && ctx.path !== '/metrics') {
        const merchantId = (ctx.state.merchant as { merchantId?: string } | undefined)?.merchantId;
        const workflowId = ctx.state.workflowId as string | undefined;
        logger.info('http', {
          requestId: ctx.state.requestId,
          method: ctx.method,
          route: (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? maskIds(ctx.path),
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          ...(merchantId ? { merchantId } : {}),
          ...(workflowId ? { workflowId } : {}),
        });
      }
    }
  };
}
