import type { PaymentRequirements } from './envelope.js';
import { randomNonce, signVoucher, type Voucher } from './voucher.js';
import { newId } from './ids.js';

export interface VoucherTerms {
  spendIntentId: string;
  borrowerId: string;
  operationalAgentId: string;
  merchantId: string;
  payTo: string;
  amount: string;
  asset: string;
  network: string;
  resource: string;
  orderRef: string;
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
