import { ApplicationFailure } from '@temporalio/activity';
import { stageIndex, type OnboardingStage } from '@credit-facilitator/wire/onboarding';
import { refundDailySpend } from '../src/store/agent-spend.js';
import { changeBorrower } from '../src/store/borrower-changes.js';
import { changeBorrowerStanding } from '../src/store/borrower-standing.js';
import { releaseHold } from '../src/store/borrowers.js';
import type { BorrowerDoc } from '../src/store/documents.js';
import type { Store } from '../src/store/mongo.js';
import { claimHandleRecord, ensureAgentKey, revokeOtherKeys } from '../src/store/operational-agents.js';
import { expireSpendIntentOnce } from '../src/store/spend-intents.js';
import { ONBOARDING_FAILURES, type RegisterAgentKeyArgs } from '../src/temporal/agent-definitions.js';

export interface OnboardingActivityDeps {
  store: Store;
}

/** A stored stage before `stage` (a document without one never matched the old $in guard, nor does it here). */
const isBefore = (b: BorrowerDoc, stage: OnboardingStage): boolean => b.stage !== undefined && stageIndex(b.stage) < stageIndex(stage);

/** Store writes behind the onboarding updates and the spend-intent expiry. Each is safe to retry. */
export function createOnboardingActivities(deps: OnboardingActivityDeps) {
  const c = deps.store.c;
  return {
    /** Books the credit line once: only a borrower still before FACILITY_ACCEPTED gets it. */
    async recordFacilityAccepted(input: { borrowerId: string; creditLimit: string }): Promise<void> {
      const limit = Number(input.creditLimit);
      await changeBorrower(c, input.borrowerId, (b) => ({
        result: undefined,
        ...(b && isBefore(b, 'FACILITY_ACCEPTED') ? { change: { stage: 'FACILITY_ACCEPTED', creditLimit: limit, available: b.available + limit } } : {}),
      }));
    },

    async recordAgentKey(input: { borrowerId: string; key: RegisterAgentKeyArgs }): Promise<{ revokedKeyIds: string[] }> {
      const k = input.key;
      const now = new Date();
      await ensureAgentKey(c, {
        _id: k.keyId,
        borrowerId: input.borrowerId,
        operationalAgentId: k.operationalAgentId,
        publicKey: k.publicKey,
        status: 'active',
        createdAt: now,
        revokedAt: null,
        grant: k.grant,
      });
      const revokedKeyIds = k.rotate ? await revokeOtherKeys(c, k.operationalAgentId, k.keyId, now) : [];
      await changeBorrower(c, input.borrowerId, (b) => ({
        result: undefined,
        ...(b && isBefore(b, 'AGENT_KEY_REGISTERED') ? { change: { stage: 'AGENT_KEY_REGISTERED' } } : {}),
      }));
      return { revokedKeyIds };
    },

    /** The handle's unique _id decides; the borrower becomes ACTIVE (the only status that may spend). */
    async recordHandle(input: { borrowerId: string; handle: string }): Promise<void> {
      const now = new Date();
      if ((await claimHandleRecord(c, input.handle, input.borrowerId, now)) === 'taken') {
        throw ApplicationFailure.nonRetryable('that handle belongs to another borrower', ONBOARDING_FAILURES.handleTaken);
      }
      // Copies ACTIVE onto the agents made during onboarding, so their captures do not read the borrower.
      await changeBorrowerStanding(c, input.borrowerId, () => ({ result: undefined, change: { handle: input.handle, stage: 'ACTIVE', status: 'ACTIVE' } }));
    },

    /** RESERVED -> EXPIRED unless a capture consumed it first; then the hold and the daily charge go back. */
    async expireSpendIntent(input: { spendIntentId: string; borrowerId: string; spendDayId?: string }): Promise<'expired' | 'consumed'> {
      // No intent document (the preparing call stopped after holding credit) expires all the same.
      if (!(await expireSpendIntentOnce(c, input.spendIntentId))) return 'consumed';
      await releaseHold(c, input.borrowerId, input.spendIntentId);
      if (input.spendDayId) await refundDailySpend(c, input.spendDayId, input.spendIntentId);
      return 'expired';
    },
  };
}

export type OnboardingActivities = ReturnType<typeof createOnboardingActivities>;
