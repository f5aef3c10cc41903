import type { MerchantPrincipal } from '../../auth/permissions.js';
import type { RatePolicy } from '../../domain/rate-limit.js';
import type { ApiDeps } from '../deps.js';
import type { z } from 'zod';
import type { MeResponseSchema } from './response-schemas.js';

const limit = (own: RatePolicy | undefined, defaults: RatePolicy) => ({ ...(own ?? defaults), source: own ? ('merchant' as const) : ('default' as const) });

/** GET /facilitator/me: who this credential is, what it may do and the limits it runs under. */
export function meBody(deps: ApiDeps, p: MerchantPrincipal): z.output<typeof MeResponseSchema> {
  const env = deps.env;
  const share = env.CAPTURE_MERCHANT_SHARE;
  const maxInFlight = deps.captureAdmission?.merchantLimit;
  return {
    merchantId: p.merchantId,
    ...(p.merchantName ? { name: p.merchantName } : {}),
    payoutAddress: p.payoutAddress,
    credential: { type: p.credential, id: p.subject, ...(p.credential === 'jwt' ? { steppedUp: p.steppedUp } : {}) },
    permissions: [...p.permissions],
    limits: {
      verify: limit(p.rateLimits?.verify, { perMinute: env.RATE_LIMIT_VERIFY_PER_MIN, burst: env.RATE_LIMIT_VERIFY_BURST }),
      capture: limit(p.rateLimits?.capture, { perMinute: env.RATE_LIMIT_CAPTURE_PER_MIN, burst: env.RATE_LIMIT_CAPTURE_BURST }),
      ...(share < 1 && maxInFlight !== undefined && Number.isFinite(maxInFlight) ? { captureShare: { share, maxInFlight } } : {}),
    },
  };
}
