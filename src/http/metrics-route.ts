import Router from '@koa/router';
import type { Registry } from 'prom-client';
import { ApiError } from '../domain/errors.js';
import { presentsMetricsToken } from '../observability/metrics-server.js';

/** GET /metrics in the Prometheus text format; behind METRICS_TOKEN (Bearer) when one is set. */
export function metricsRouter(registry: Registry, token: string | undefined): Router {
  const router = new Router();
  router.get('/metrics', async (ctx) => {
    if (token) {
      if (!presentsMetricsToken(ctx.get('authorization'), token)) throw ApiError.unauthenticated('Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.');
    }
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  return router;
}
