import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JSONWebKeySet, type JWK, type JWTPayload } from 'jose';
import { z } from 'zod';

export interface MerchantJwtConfig {
  issuer: string;
  audience: string;
  jwksUrl?: string;
  publicJwk?: JWK;
}

export interface MerchantJwtClaims {
  sub: string;
  merchantId: string;
  permissions: string[];
  amr: string[];
  authTime: number | null;
}

const ClaimsSchema = z.object({
  sub: z.string().min(1),
  merchant_id: z.uuid(),
  permissions: z.union([z.array(z.string()), z.string().transform((s) => s.split(' ').filter(Boolean))]),
  amr: z.array(z.string()).optional(),
  auth_time: z.number().int().optional(),
});

export type JwtVerifier = (token: string) => Promise<MerchantJwtClaims | null>;

/** Returns null for any token that fails verification; the reason is never echoed to callers. */
export function createMerchantJwtVerifier(config: MerchantJwtConfig): JwtVerifier {
  const keys = config.jwksUrl
    ? createRemoteJWKSet(new URL(config.jwksUrl))
    : config.publicJwk
      ? createLocalJWKSet({ keys: [config.publicJwk] } as JSONWebKeySet)
      : null;
  if (!keys) return async () => null;
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: config.issuer,
        audience: config.audience,
        algorithms: ['EdDSA', 'ES256', 'RS256'],
        clockTolerance: 30,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch {
      return null;
    }
    const parsed = ClaimsSchema.safeParse(payload);
    if (!parsed.success) return null;
    return {
      sub: parsed.data.sub,
      merchantId: parsed.data.merchant_id.toLowerCase(),
      permissions: parsed.data.permissions,
      amr: parsed.data.amr ?? [],
      authTime: parsed.data.auth_time ?? null,
    };
  };
}

export const STEP_UP_MAX_AGE_SECONDS = 600;

export function isSteppedUp(claims: MerchantJwtClaims, nowSeconds: number): boolean {
  return claims.amr.includes('mfa') && claims.authTime !== null && nowSeconds - claims.authTime < STEP_UP_MAX_AGE_SECONDS;
}
