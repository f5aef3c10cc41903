import type { AgentKeyRecord, BorrowerRecord, VerificationContext } from '../domain/verification.js';
import type { Voucher } from '@credit-facilitator/wire/voucher';
import type { PaymentDeps } from './deps.js';
import type { SpendIntentDoc } from '../store/documents.js';
import type { KeyToVerify } from '../store/agent-key-copies.js';
import { borrowerFromCopy } from '../store/borrower-standing-copies.js';
import { findBorrower } from '../store/borrowers.js';
import type { Collections } from '../store/collections.js';
import { findMerchant } from '../store/merchants.js';
import { findOperationalAgent, keysToVerify } from '../store/operational-agents.js';
import { findSpendIntent, findSpendIntentWithFate } from '../store/spend-intents.js';
import { intentView } from './intent-view.js';

/** A capture's context, with the intent document it was built from (its fate not applied; see capture.ts). */
export interface CaptureContext {
  ctx: VerificationContext;
  intent: SpendIntentDoc | null;
}

/** Gathers from the store everything the pure rules need about one voucher, the intent's fate applied (verify). */
export async function loadVerificationContext(deps: PaymentDeps, merchantId: string, voucher: Voucher): Promise<VerificationContext> {
  return (await loadContext(deps, merchantId, voucher, { withFate: true })).ctx;
}

/**
 * As loadVerificationContext, for a capture: two reads (the operational agent with its copies of
 * its keys and of its borrower's standing, and the spend intent), and a third, of the borrower,
 * only when the agent's copy does not say the borrower may spend. The intent's fate is not read: the capture's consume
 * insert decides it, and a refused one reads it then (capture.ts). `ownPaymentId` lets a resumed
 * capture recognise its own earlier claim of the voucher instead of calling it reused.
 */
export function loadCaptureContext(deps: PaymentDeps, merchantId: string, voucher: Voucher, ownPaymentId: string, knownPayoutAddress?: string): Promise<CaptureContext> {
  return loadContext(deps, merchantId, voucher, { withFate: false, ownPaymentId, knownPayoutAddress });
}

async function loadContext(
  deps: PaymentDeps,
  merchantId: string,
  voucher: Voucher,
  opts: { withFate: boolean; ownPaymentId?: string; knownPayoutAddress?: string | undefined },
): Promise<CaptureContext> {
  const c = deps.store.c;
  // Every read is by _id: the agent carries a copy of its keys and of its borrower's standing, and
  // the spend intent's fate, not a search of payments, tells whether the voucher was used.
  const [merchant, { keys, borrower }, intent] = await Promise.all([
    opts.knownPayoutAddress !== undefined ? { payoutAddress: opts.knownPayoutAddress } : findMerchant(c, merchantId),
    agentAndBorrower(c, voucher),
    (opts.withFate ? findSpendIntentWithFate : findSpendIntent)(c, voucher.spendIntentId),
  ]);
  const agentKeys: AgentKeyRecord[] = keys.map((k) => ({
    keyId: k.keyId,
    publicKey: k.publicKey,
    status: k.status,
    borrowerId: k.borrowerId,
    operationalAgentId: k.operationalAgentId,
  }));
  const ctx: VerificationContext = {
    now: Math.floor(deps.nowMs() / 1000),
    clockSkewSeconds: deps.env.CLOCK_SKEW_SECONDS,
    maxLifetimeSeconds: deps.env.VOUCHER_MAX_LIFETIME_SECONDS,
    network: deps.settlement.network,
    asset: deps.settlement.asset.toLowerCase(),
    merchant: { merchantId, payoutAddress: (merchant?.payoutAddress ?? '').toLowerCase() },
    agentKeys,
    borrower,
    ...intentView(intent, opts.ownPaymentId),
  };
  return { ctx, intent };
}

/**
 * The voucher's agent keys and its borrower as the rules see them. The agent's standing copy
 * stands in for the borrower only when it says the borrower may spend; anything else (no copy,
 * onboarding, suspended) is read from the borrower, so a stale copy costs a read, never a refusal.
 */
async function agentAndBorrower(c: Collections, voucher: Voucher): Promise<{ keys: KeyToVerify[]; borrower: BorrowerRecord | null }> {
  const agent = await findOperationalAgent(c, voucher.operationalAgentId);
  const copied = agent && borrowerFromCopy(agent, voucher.borrowerId);
  const [keys, borrower] = await Promise.all([
    keysToVerify(c, agent),
    copied ?? findBorrower(c, voucher.borrowerId).then((b) => (b ? { borrowerId: b._id, status: b.suspended ? 'SUSPENDED' : b.status } : null)),
  ]);
  return { keys, borrower };
}
