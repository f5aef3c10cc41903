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
      const matched = (ctx as Context & { _matchedRoute?: string })._matchedRoute;
      recordRequest(logger, metrics, {
        requestId: ctx.state.requestId as string | undefined,
        method: ctx.method,
        path: ctx.path,
        matched,
        status: ctx.status,
        seconds: (performance.now() - started) / 1000,
        merchantId: (ctx.state.merchant as { merchantId?: string } | undefined)?.merchantId,
        workflowId: ctx.state.workflowId as string | undefined,
      });
    }
  };
}

export interface RequestRecord {
  requestId: string | undefined;
  method: string;
  path: string;
  /** The route pattern that answered, when one did. */
  matched: string | undefined;
  status: number;
  seconds: number;
  merchantId?: string | undefined;
  workflowId?: string | undefined;
}

/** The access log line and the HTTP metrics of one answered request (observeRequests, and answers given before Koa). */
export function recordRequest(logger: Logger, metrics: ApiMetrics | undefined, r: RequestRecord): void {
  if (metrics) {
    const route = r.matched ?? 'unmatched';
    const method = httpMethodLabel(r.method);
    metrics.httpDuration.observe({ route, method }, r.seconds);
    metrics.httpRequests.inc({ route, method, status: httpStatusLabel(r.status) });
  }
  if (r.path.startsWith('/mcp') || r.path === '/metrics') return;
  logger.info('http', {
    requestId: r.requestId,
    method: r.method,
    route: r.matched ?? maskIds(r.path),
    status: r.status,
    ms: Math.round(r.seconds * 10_000) / 10,
    ...(r.merchantId ? { merchantId: r.merchantId } : {}),
    ...(r.workflowId ? { workflowId: r.workflowId } : {}),
  });
}
