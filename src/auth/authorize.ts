import { ApiError } from '../domain/errors.js';
import { PERMISSIONS, type MerchantPrincipal, type Permission } from './permissions.js';

/**
 * What an authenticated merchant caller may do, for every merchant-facing edge (the REST routes and
 * the merchant console call this one rule): null when allowed, else the refusal. A missing
 * permission is 403 FORBIDDEN; an action that needs `x402:settle:create` by a user JWT also needs a
 * recent MFA (403 STEP_UP_REQUIRED); an API key satisfies step-up (it is a machine's credential).
 */
export function authorizationRefusal(principal: MerchantPrincipal, permission: Permission | null): ApiError | null {
  if (permission !== null && !principal.permissions.includes(permission)) return ApiError.forbidden(permission);
  if (permission === PERMISSIONS.settleCreate && principal.credential === 'jwt' && !principal.steppedUp) return ApiError.stepUpRequired();
  return null;
}
