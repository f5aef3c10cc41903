import type { Context, Next } from 'koa';
import { authenticateMerchant } from '../auth/merchant-auth.js';
import { authorizationRefusal } from '../auth/authorize.js';
import type { MerchantPrincipal, Permission } from '../auth/permissions.js';
import { ApiError } from '../domain/errors.js';
import type { ApiDeps } from './deps.js';
import { phaseTimerOf } from '../observability/phase-timer.js';

export function merchantOf(ctx: Context): MerchantPrincipal {
  return ctx.state.merchant as MerchantPrincipal;
}

/**
 * 401 without a valid merchant credential, 403 without the permission (null: any valid credential). Capture by a user JWT also
 * needs a recent MFA (step-up); an API key satisfies step-up on the capture route only.
 */
export function requireMerchant(deps: ApiDeps, permission: Permission | null) {
  return async (ctx: Context, next: Next) => {
    const principal = await authenticateMerchant(deps.store.c, deps.verifyJwt, ctx.get('authorization') || undefined, Math.floor(deps.nowMs() / 1000), deps.merchantCache);
    if (!principal) throw ApiError.unauthenticated();
    const refusal = authorizationRefusal(principal, permission);
    if (refusal) throw refusal;
    ctx.state.merchant = principal;
    phaseTimerOf(ctx)?.mark('auth');
    await next();
  };
}
