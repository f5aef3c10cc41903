import Koa from 'koa';
import { allowedMethods } from '../http/allowed-methods.js';
import type { AppDeps } from './app-deps.js';
import { errorMiddleware } from '../http/errors.js';
import { facilitatorRouter } from '../api/facilitator/routes.js';
import { requestIdMiddleware } from '../http/request-id.js';
import { openApiRouter } from '../api/openapi.js';
import { metricsRouter } from '../http/metrics-route.js';
import { observeRequests } from '../http/observe-requests.js';
import { createOAuthProvider } from '../auth/oauth/provider.js';
import { oauthProviderMiddleware } from '../auth/oauth/mount.js';
import { hostGuard } from '../auth/oauth/host-guard.js';
import { corsMiddleware, corsPolicy } from '../http/cors.js';
import { guardRegistration } from '../auth/oauth/registration-guard.js';
import { borrowerWebRoutes } from '../borrower-web/router.js';
import { mcpRouter } from '../mcp/routes.js';
import { merchantWebRoutes } from '../merchant-web/router.js';

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.use(requestIdMiddleware);
  app.use(observeRequests(deps.logger, deps.metrics?.api));
  app.use(hostGuard(deps.env));
  // After the Host guard (a rebound or forged Host gets no CORS), before every route CORS opens.
  app.use(corsMiddleware(corsPolicy(deps.env)));
  // oidc-provider writes its own responses and OAuth errors, so it sits outside the JSON error middleware.
  const oauth = createOAuthProvider(deps);
  app.use(oauthProviderMiddleware(oauth, { guardRegistration: (ctx) => guardRegistration(deps, ctx) }));
  app.use(errorMiddleware(deps.logger));
  app.use(borrowerWebRoutes(deps, oauth));
  app.use(merchantWebRoutes(deps));
  if (deps.metrics) app.use(metricsRouter(deps.metrics.registry, deps.env.METRICS_TOKEN).routes());
  app.use(openApiRouter(deps.env).routes());
  app.use(mcpRouter(deps).routes());
  const facilitator = facilitatorRouter(deps);
  app.use(facilitator.routes());
  app.use(allowedMethods(facilitator));
  return app;
}
