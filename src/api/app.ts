import Koa from 'koa';
import { ApiError } from '../domain/errors.js';
import type { AppDeps } from './deps.js';
import { errorMiddleware } from './errors.js';
import { facilitatorRouter } from './facilitator/routes.js';
import { requestIdMiddleware } from './request-id.js';
import { openApiRouter } from './openapi.js';

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.use(requestIdMiddleware);
  app.use(errorMiddleware(deps.logger));
  app.use(openApiRouter(deps.env).routes());
  const facilitator = facilitatorRouter(deps);
  app.use(facilitator.routes());
  app.use(
    facilitator.allowedMethods({
      throw: true,
      methodNotAllowed: () => ApiError.methodNotAllowed(),
      notImplemented: () => ApiError.methodNotAllowed(),
    }),
  );
  return app;
}
