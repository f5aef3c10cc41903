import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { ApiError } from '../domain/errors.js';

/**
 * The router's 405 and 501 as the one error shape, keeping the Allow header it computed (its
 * `throw` option drops it).
 */
export function allowedMethods(router: Router) {
  const inner = router.allowedMethods();
  return async (ctx: Context, next: Next) => {
    await inner(ctx as Parameters<typeof inner>[0], next);
    if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null) {
      throw ApiError.methodNotAllowed(ctx.response.get('Allow') || undefined);
    }
  };
}
