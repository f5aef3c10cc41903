/**
 * Refunds of CONFIRMED payments: the merchant returns all or part of a payment on-chain with an
 * EIP-3009 ReceiveWithAuthorization signed by its payout wallet, which the settlement contract
 * redeems in refundWithAuthorization (contracts/CreditSettlement.sol). This module holds the pure
 * rules: what a valid authorization looks like for a payment, and how refunds add up.
 */

import type { RefundView } from '@credit-facilitator/wire/receipt';

// The refund's shape and statuses are the wire's, like the receipt that carries them.
export { REFUND_STATUSES, type RefundStatus } from '@credit-facilitator/wire/payment-status';
export type { RefundView };

/** The EIP-3009 message as decimal and hex strings (what the API takes and the store keeps). */
export interface RefundAuthorizationFields {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

/** Refunds that still count against the payment: pending ones hold their amount until they fail. */
export function refundTotals(refunds: readonly Pick<RefundView, 'amount' | 'status'>[]): { reserved: bigint; refunded: bigint } {
  let reserved = 0n;
  let refunded = 0n;
  for (const r of refunds) {
    if (r.status === 'FAILED') continue;
    reserved += BigInt(r.amount);
    if (r.status === 'SUCCEEDED') refunded += BigInt(r.amount);
  }
  return { reserved, refunded };
}

/** The upper 16 bytes of a refund nonce are the payment's UUID: the contract redeems it for that payment only. */
export function nonceBindsPayment(nonce: string, paymentId: string): boolean {
  return /^0x[0-9a-fA-F]{64}$/.test(nonce) && nonce.slice(2, 34).toLowerCase() === paymentId.replace(/-/g, '').toLowerCase();
}

export type RefundAuthorizationProblem =
  | 'to_not_settlement_contract'
  | 'from_not_payout_address'
  | 'value_not_amount'
  | 'nonce_not_bound_to_payment'
  | 'expires_too_soon'
  | 'not_yet_valid';

/**
 * Checks a refund authorization against the payment before any signature work: it must pay the
 * settlement contract, come from the payout address the payment was paid to, carry exactly the
 * refund amount, be bound to this payment, and stay valid long enough to be submitted and mined.
 */
export function refundAuthorizationProblems(
  a: RefundAuthorizationFields,
  expect: { paymentId: string; settlement: string; payoutAddress: string; amount: bigint; nowSeconds: number; minValidSeconds: number },
): RefundAuthorizationProblem[] {
  const problems: RefundAuthorizationProblem[] = [];
  if (a.to.toLowerCase() !== expect.settlement.toLowerCase()) problems.push('to_not_settlement_contract');
  if (a.from.toLowerCase() !== expect.payoutAddress.toLowerCase()) problems.push('from_not_payout_address');
  if (BigInt(a.value) !== expect.amount) problems.push('value_not_amount');
  if (!nonceBindsPayment(a.nonce, expect.paymentId)) problems.push('nonce_not_bound_to_payment');
  if (BigInt(a.validBefore) < BigInt(expect.nowSeconds + expect.minValidSeconds)) problems.push('expires_too_soon');
  if (BigInt(a.validAfter) >= BigInt(expect.nowSeconds)) problems.push('not_yet_valid');
  return problems;
}

/** The request field each problem is about. */
export const REFUND_PROBLEM_FIELDS: Readonly<Record<RefundAuthorizationProblem, string>> = {
  to_not_settlement_contract: 'authorization.to',
  from_not_payout_address: 'authorization.from',
  value_not_amount: 'authorization.value',
  nonce_not_bound_to_payment: 'authorization.nonce',
  expires_too_soon: 'authorization.validBefore',
  not_yet_valid: 'authorization.validAfter',
};

export const REFUND_PROBLEM_MESSAGES: Readonly<Record<RefundAuthorizationProblem, string>> = {
  to_not_settlement_contract: 'authorization.to must be the settlement contract (GET /facilitator/supported names it)',
  from_not_payout_address: 'authorization.from must be the payout address this payment was paid to',
  value_not_amount: 'authorization.value must equal amount',
  nonce_not_bound_to_payment: "authorization.nonce must start with the payment's 16 UUID bytes (0x + paymentId without dashes + 32 hex digits)",
  expires_too_soon: 'authorization.validBefore must leave at least 10 minutes to submit the refund',
  not_yet_valid: 'authorization.validAfter must be in the past (use 0)',
};

/** The refund workflow's id: one workflow per refund, whoever starts it. */
export function refundWorkflowId(refundId: string): string {
  return `refund-${refundId}`;
}

export interface RefundWorkflowInput {
  paymentId: string;
  refundId: string;
}
