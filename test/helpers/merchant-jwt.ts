import { importJWK, SignJWT } from 'jose';
import { ALL_MERCHANT_PERMISSIONS } from '../../src/auth/permissions.js';
import { getStack } from '../support/stack.js';

export interface MerchantJwtOptions {
  merchantId: string;
  permissions?: readonly string[];
  /** amr carries mfa. Default true. */
  mfa?: boolean;
  /** Seconds ago the user signed in. Default 0. */
  authAgeSeconds?: number;
  /** Seconds from now; negative mints an already expired token. Default 900. */
  expiresIn?: number;
  audience?: string;
}

/** A merchant user JWT signed with the dev stack's issuer key, shaped like `admin jwt issue`'s. */
export async function mintMerchantJwt(o: MerchantJwtOptions): Promise<string> {
  const stack = await getStack();
  const now = Math.floor(Date.now() / 1000);
  const key = await importJWK(stack.devJwt.privateJwk, 'EdDSA');
  return new SignJWT({
    merchant_id: o.merchantId,
    permissions: [...(o.permissions ?? ALL_MERCHANT_PERMISSIONS)],
    amr: o.mfa === false ? ['pwd'] : ['pwd', 'mfa'],
    auth_time: now - (o.authAgeSeconds ?? 0),
  })
    .setProtectedHeader({ alg: 'EdDSA', kid: stack.devJwt.kid })
    .setIssuer(stack.devJwt.issuer)
    .setAudience(o.audience ?? stack.config.MERCHANT_JWT_AUDIENCE)
    .setSubject(`user-${o.merchantId.slice(0, 8)}`)
    .setIssuedAt(now)
    .setExpirationTime(now + (o.expiresIn ?? 900))
    .sign(key);
}
