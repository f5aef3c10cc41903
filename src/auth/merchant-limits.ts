import type { Env } from '../config/env.js';
import type { RatePolicy } from '../domain/rate-limit.js';
import type { MerchantRateLimits } from '../store/documents.js';
import type { MerchantPrincipal } from './permissions.js';

export type RateBucket = keyof MerchantRateLimits;

/** The default policy of a bucket: reads share verify's, writes capture's. */
export function defaultRatePolicy(env: Env, bucket: RateBucket): RatePolicy {
  return bucket === 'verify'
    ? { perMinute: env.RATE_LIMIT_VERIFY_PER_MIN, burst: env.RATE_LIMIT_VERIFY_BURST }
    : { perMinute: env.RATE_LIMIT_CAPTURE_PER_MIN, burst: env.RATE_LIMIT_CAPTURE_BURST };
}

/** The policy a merchant runs under in a bucket: its own (set by an operator) or the default. */
export function ratePolicyFor(env: Env, principal: Pick<MerchantPrincipal, 'rateLimits'>, bucket: RateBucket, defaults = defaultRatePolicy(env, bucket)): RatePolicy {
  return principal.rateLimits?.[bucket] ?? defaults;
}
