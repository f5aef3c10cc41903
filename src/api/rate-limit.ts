import type { Context, Next } from 'koa';
import { ApiError } from '../domain/errors.js';
import type { RatePolicy } from '../domain/rate-limit.js';
import type { MerchantRateLimits } from '../store/documents.js';
import { consumeRate } from '../store/rate-limits.js';
import type { ApiDeps } from './deps.js';
import { merchantOf } from './merchant-auth.js';
import { phaseTimerOf } from '../observability/phase-timer.js';
import { ratePolicyFor } from '../auth/merchant-limits.js';

/**
 * Per-merchant limit shared by every API process through the database. Runs after authentication.
 * The merchant's own limits (set by an operator) replace the default policy for that bucket.
 */
export function rateLimit(deps: ApiDeps, bucket: keyof MerchantRateLimits, defaults: RatePolicy) {
  return async (ctx: Context, next: Next) => {
    const merchant = merchantOf(ctx);
    const policy = ratePolicyFor(deps.env, merchant, bucket, defaults);
    const d = await consumeRate(deps.store.c, `${merchant.merchantId}:${bucket}`, policy, deps.nowMs());
    ctx.set('RateLimit-Limit', String(d.limit));
    ctx.set('RateLimit-Remaining', String(d.remaining));
    ctx.set('RateLimit-Reset', String(d.resetSeconds));
    ctx.set('RateLimit-Policy', `${policy.perMinute};w=60;burst=${policy.burst}`);
    if (!d.allowed) throw ApiError.rateLimited(d.retryAfterSeconds);
    phaseTimerOf(ctx)?.mark('rate_limit');
    await next();
  };
}
