import type { AgentKeyRecord, SpendIntentRecord, VerificationContext } from '../domain/verification.js';
import type { Voucher } from '@credit-facilitator/wire/voucher';
import type { PaymentDeps } from './deps.js';
import { findBorrower, listAgentKeys } from '../store/borrowers.js';
import { findMerchant } from '../store/merchants.js';
import { findSpendIntentWithFate } from '../store/spend-intents.js';

/**
 * Gathers from the store everything the pure rules need about one voucher. `ownPaymentId` lets a
 * resumed capture recognise its own earlier claim of the voucher instead of calling it reused.
 */
export async function loadVerificationContext(
  deps: PaymentDeps,
  merchantId: string,
  voucher: Voucher,
  ownPaymentId?: string,
  knownPayoutAddress?: string,
): Promise<VerificationContext> {
  const c = deps.store.c;
  // Every read is by _id (or one small per-agent list): the spend intent's fate, not a search of
  // payments, tells whether the voucher was used.
  const [merchant, keys, borrower, intent] = await Promise.all([
    knownPayoutAddress !== undefined ? { payoutAddress: knownPayoutAddress } : findMerchant(c, merchantId),
    listAgentKeys(c, voucher.operationalAgentId),
    findBorrower(c, voucher.borrowerId),
    findSpendIntentWithFate(c, voucher.spendIntentId),
  ]);
  const agentKeys: AgentKeyRecord[] = keys.map((k) => ({
    keyId: k._id,
    publicKey: k.publicKey,
    status: k.status,
    borrowerId: k.borrowerId,
    operationalAgentId: k.operationalAgentId,
  }));
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
  return {
    now: Math.floor(deps.nowMs() / 1000),
    clockSkewSeconds: deps.env.CLOCK_SKEW_SECONDS,
    maxLifetimeSeconds: deps.env.VOUCHER_MAX_LIFETIME_SECONDS,
    network: deps.settlement.network,
    asset: deps.settlement.asset.toLowerCase(),
    merchant: { merchantId, payoutAddress: (merchant?.payoutAddress ?? '').toLowerCase() },
    agentKeys,
    borrower: borrower ? { borrowerId: borrower._id, status: borrower.suspended ? 'SUSPENDED' : borrower.status } : null,
    spendIntent,
    voucherAlreadyUsed: intent?.status === 'CONSUMED' && intent.paymentId !== undefined && intent.paymentId !== ownPaymentId,
  };
}
