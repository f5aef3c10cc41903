import type { Context, Next } from 'koa';
import type { Logger } from '../observability/logger.js';
import type { ApiMetrics } from '../observability/metrics.js';
import { httpMethodLabel, httpStatusLabel } from '../observability/labels.js';

/** Path segments that look like ids or interaction handles are not worth a log line of their own. */
const maskIds = (path: string): string => path.replace(/\/[A-Za-z0-9_-]{16,}/g, '/:id');

/**
 * Measures every request once, for both the access log and the HTTP metrics. It sits outside the
 * error middleware, so a refused request is recorded with its final status.
 * Log: one JSON line per REST request with request id, route, status, latency, and the merchant and
 * workflow (= paymentId) it touched when known; never headers or bodies, so never a credential
 * (/mcp logs its own line with the tool and borrower). Metrics label by route pattern, never the raw path.
 */
export function observeRequests(logger: Logger, metrics?: ApiMetrics) {
  return async (ctx: Context, next: Next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const matched = (ctx as Context & { _matchedRoute?: string })._matchedRoute;
      if (metrics) {
        const route = matched ?? 'unmatched';
        const method = httpMethodLabel(ctx.method);
        metrics.httpDuration.observe({ route, method }, seconds);
        metrics.httpRequests.inc({ route, method, status: httpStatusLabel(ctx.status) });
      }
      if (!ctx.path.startsWith('/mcp') && ctx.path !== '/metrics') {
        const merchantId = (ctx.state.merchant as { merchantId?: string } | undefined)?.merchantId;
        const workflowId = ctx.state.workflowId as string | undefined;
        logger.info('http', {
          requestId: ctx.state.requestId,
          method: ctx.method,
          route: matched ?? maskIds(ctx.path),
          status: ctx.status,
          ms: Math.round(seconds * 10_000) / 10,
          ...(merchantId ? { merchantId } : {}),
          ...(workflowId ? { workflowId } : {}),
        });
      }
    }
  };
}
