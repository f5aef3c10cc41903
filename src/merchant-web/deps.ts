import type { JwtVerifier } from '../auth/merchant-jwt.js';
import type { PaymentDeps } from '../payments/deps.js';
import type { MerchantCache } from '../store/merchant-cache.js';
import type { OAuthKeys } from '../store/oauth-keys.js';

/**
 * What the merchant console uses: the payment and webhook services the REST routes call, the same
 * merchant-credential verifier and cache, and the cookie secrets its session key derives from.
 */
export interface MerchantWebDeps extends PaymentDeps {
  verifyJwt: JwtVerifier;
  merchantCache?: MerchantCache;
  oauthKeys: OAuthKeys;
}
