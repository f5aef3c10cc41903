import { evaluateVoucher, type SpendIntentRecord, type VerificationContext, type VerificationInput } from '../domain/verification.js';
import type { InvalidReason } from '@credit-facilitator/wire/invalid-reasons';
import type { SpendIntentDoc, SpendIntentFateDoc } from '../store/documents.js';
import { withFate } from '../store/spend-intents.js';

/**
 * What the rules see of a spend intent: its record, and whether another payment used it already.
 * `ownPaymentId` lets a resumed capture recognise its own earlier claim instead of calling it reused.
 */
export function intentView(intent: SpendIntentDoc | null, ownPaymentId?: string): Pick<VerificationContext, 'spendIntent' | 'voucherAlreadyUsed'> {
  const spendIntent: SpendIntentRecord | null = intent
    ? {
        spendIntentId: intent._id,
        borrowerId: intent.borrowerId,
        operationalAgentId: intent.operationalAgentId,
        merchantId: intent.merchantId,
        payTo: intent.payTo,
        amount: intent.amount,
        asset: intent.asset,
        network: intent.network,
        orderRef: intent.orderRef,
        status: intent.status,
        expiresAt: intent.expiresAt,
        ...(intent.consumedByVoucherId ? { consumedByVoucherId: intent.consumedByVoucherId } : {}),
      }
    : null;
  return { spendIntent, voucherAlreadyUsed: intent?.status === 'CONSUMED' && intent.paymentId !== undefined && intent.paymentId !== ownPaymentId };
}

/**
 * The reasons the intent's fate can decide: with the intent document only (its status a copy of
 * the fate, written late), every other rule answers as with the fate, these may not.
 */
export function fateMayChange(reason: InvalidReason): boolean {
  return reason === 'voucher_already_used' || reason === 'unknown_spend_intent';
}

/** The context as it is once the intent's fate (read late, or null when undecided) is applied. */
export function contextWithFate(ctx: VerificationContext, intent: SpendIntentDoc, fate: SpendIntentFateDoc | null, ownPaymentId: string): VerificationContext {
  return { ...ctx, ...intentView(withFate(intent, fate), ownPaymentId) };
}

/**
 * Why a capture whose claim lost (the voucher taken, or the intent's fate decided otherwise) is
 * refused: what the rules say with the fate known, as a capture that read it first answered;
 * voucher_already_used when they would let it through (another payment holds the voucher).
 */
export function lostClaimReason(input: VerificationInput, ctx: VerificationContext, intent: SpendIntentDoc, fate: SpendIntentFateDoc | null, ownPaymentId: string): InvalidReason {
  const verdict = evaluateVoucher(input, contextWithFate(ctx, intent, fate, ownPaymentId));
  return verdict.ok ? 'voucher_already_used' : verdict.reason;
}
