import type { PaymentRequirements } from './envelope.js';
import { randomNonce, signVoucher, type Voucher } from './voucher.js';
import { newId } from './ids.js';
import type { PaymentTerms } from './payment-terms.js';

export interface VoucherTerms extends PaymentTerms {
  spendIntentId: string;
  resource: string;
  issuedAt: number;
  expiresAt: number;
}

export function buildVoucher(terms: VoucherTerms): Voucher {
  return { v: 1, voucherId: newId(), nonce: randomNonce(), ...terms, payTo: terms.payTo.toLowerCase(), asset: terms.asset.toLowerCase() };
}

export function creditRequirements(v: Voucher, maxTimeoutSeconds = 600): PaymentRequirements {
  return { scheme: 'credit', network: v.network, asset: v.asset, amount: v.amount, payTo: v.payTo, maxTimeoutSeconds, extra: {} };
}

/** The x402 v2 PaymentPayload that carries a signed credit voucher (the PAYMENT-SIGNATURE body). */
export function signedCreditPayload(v: Voucher, agentPrivateKey: Uint8Array, accepted: PaymentRequirements = creditRequirements(v)) {
  return {
    x402Version: 2 as const,
    resource: { url: v.resource },
    accepted,
    payload: { voucher: v, signature: signVoucher(v, agentPrivateKey) },
  };
}
