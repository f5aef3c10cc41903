import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Registry } from 'prom-client';
import { ApiError } from '../domain/errors.js';
import type { ApiMetrics } from '../observability/metrics.js';
import { sameSecret } from '../observability/metrics-server.js';

/** Counts every request by its route pattern (never the raw path, which carries ids). */
export function httpMetricsMiddleware(m: ApiMetrics) {
  return async (ctx: Context, next: Next) => {
    const end = m.httpDuration.startTimer();
    try {
      await next();
    } finally {
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      end({ route: String(route), method: ctx.method });
      m.httpRequests.inc({ route: String(route), method: ctx.method, status: String(ctx.status) });
    }
  };
}

/** GET /metrics in the Prometheus text format; behind METRICS_TOKEN (Bearer) when one is set. */
export function metricsRouter(registry: Registry, token: string | undefined): Router {
  const router = new Router();
  router.get('/metrics', async (ctx) => {
    if (token) {
      const presented = /^Bearer (.+)$/i.exec(ctx.get('authorization'))?.[1] ?? '';
      if (!sameSecret(presented, token)) throw ApiError.unauthenticated('Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.');
    }
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  return router;
}
