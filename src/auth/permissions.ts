import type { MerchantRateLimits } from '../store/documents.js';

export const PERMISSIONS = {
  settleCreate: 'x402:settle:create',
  settleRead: 'x402:settle:read',
} as const;

export type Permission = (typeof PERMISSIONS)[keyof typeof PERMISSIONS];

export const ALL_MERCHANT_PERMISSIONS: Permission[] = [PERMISSIONS.settleCreate, PERMISSIONS.settleRead];

/** The authenticated merchant caller, whichever credential it used. */
export interface MerchantPrincipal {
  merchantId: string;
  permissions: string[];
  credential: 'api_key' | 'jwt';
  /** API key id or JWT subject; safe to log. */
  subject: string;
  /** JWT callers only: strong authentication (amr contains mfa) within the step-up window. */
  steppedUp: boolean;
  /** The merchant's name, as the operator created it (GET /facilitator/me shows it). */
  merchantName?: string;
  /** Where settlements pay this merchant (read with the credential, so capture need not read it again). */
  payoutAddress: string;
  /** The merchant's own rate limits, when an operator set them. */
  rateLimits?: MerchantRateLimits;
}
