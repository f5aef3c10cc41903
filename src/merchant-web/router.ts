import type { Middleware } from 'koa';
import type { Logger } from '../observability/logger.js';
import { accountRouter } from './account-routes.js';
import { consoleErrors } from './console-errors.js';
import type { MerchantWebDeps } from './deps.js';
import { paymentRouter } from './payment-routes.js';
import { signInRouter } from './sign-in-routes.js';
import { webhookRouter } from './webhook-routes.js';

/** The merchant console at /merchant: server-rendered pages over the merchant REST API's services, with its HTML error pages. */
export function merchantWebRoutes(deps: MerchantWebDeps & { logger: Logger }): Middleware {
  const routers = [signInRouter(deps), paymentRouter(deps), webhookRouter(deps), accountRouter(deps)].map((r) => r.routes() as unknown as Middleware);
  const errors = consoleErrors(deps.logger);
  const chain = (i: number): Middleware => (ctx, next) => (i < routers.length ? routers[i]!(ctx, () => chain(i + 1)(ctx, next)) : next());
  const all = chain(0);
  return (ctx, next) => (ctx.path === '/merchant' || ctx.path.startsWith('/merchant/') ? errors(ctx, () => all(ctx, async () => undefined)) : next());
}
