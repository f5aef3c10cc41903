import { FacilitatorResponseError } from '@x402/core/server';
import { z } from 'zod';

/** GET /facilitator/me: who the merchant's credential is. Unknown keys pass (a newer facilitator may say more). */
export const MerchantIdentitySchema = z.looseObject({
  merchantId: z.string(),
  name: z.string().optional(),
  payoutAddress: z.string().optional(),
  credential: z.looseObject({ type: z.string(), id: z.string() }),
  permissions: z.array(z.string()),
  limits: z.record(z.string(), z.unknown()).optional(),
});
export type MerchantIdentity = z.infer<typeof MerchantIdentitySchema>;

export const REQUIRED_PERMISSIONS = ['x402:settle:read', 'x402:settle:create'] as const;

/**
 * The merchant's credential cannot work: the facilitator refused it, it lacks a permission, or it
 * belongs to another merchant. A FacilitatorResponseError, so the x402 middleware answers its
 * payers 502 with this message (which never holds the key) instead of crashing.
 */
export class FacilitatorCredentialError extends FacilitatorResponseError {
  override readonly name = 'FacilitatorCredentialError';
}

/** What a merchant reads in its log when the facilitator answers 401: what is wrong and how to fix it. */
export function unauthenticatedHelp(baseUrl: string): string {
  return (
    `the facilitator at ${baseUrl} refused this merchant API key (401 UNAUTHENTICATED): the key is unknown there, revoked, or its merchant is disabled. ` +
    'Fix: configure the sk_live_ key that "merchant create" or "key issue" printed for this merchant (an operator issues a new one with ' +
    '`npm run admin -- key issue --merchant <merchantId>`), and check that baseUrl is the facilitator that issued it.'
  );
}

/** The same for a 403: the key is valid but may not do this. */
export function forbiddenHelp(requiredPermission: string | undefined): string {
  return (
    `the facilitator refused this merchant credential (403 FORBIDDEN)${requiredPermission ? `: it lacks ${requiredPermission}` : ''}. ` +
    `Fix: use an API key with ${REQUIRED_PERMISSIONS.join(' and ')} (every key "key issue" makes has both).`
  );
}

/** Why an identity cannot serve this merchant, or null when it can. */
export function identityProblem(me: MerchantIdentity, expectedMerchantId: string | undefined): string | null {
  if (expectedMerchantId && me.merchantId.toLowerCase() !== expectedMerchantId.toLowerCase()) {
    return (
      `this API key belongs to merchant ${me.merchantId}, not ${expectedMerchantId} (the merchantId this server's 402 offers name): ` +
      'every voucher would be refused with recipient_mismatch. Fix: configure the key of the merchant the offers name, or name the key\'s merchant.'
    );
  }
  const missing = REQUIRED_PERMISSIONS.filter((p) => !me.permissions.includes(p));
  return missing.length > 0 ? forbiddenHelp(missing.join(' and ')) : null;
}
