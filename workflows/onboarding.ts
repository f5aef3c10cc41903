import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { stageIndex, type OnboardingStage } from '@credit-facilitator/wire/onboarding';
import type { OnboardingActivities } from '../activities/onboarding.js';
import {
  acceptFacilityUpdate,
  claimHandleUpdate,
  ONBOARDING_FAILURES,
  onboardingStateQuery,
  registerAgentKeyUpdate,
  type OnboardingInput,
  type OnboardingState,
  type RegisterAgentKeyArgs,
} from '../src/temporal/agent-definitions.js';

const acts = proxyActivities<OnboardingActivities>({
  startToCloseTimeout: '10 seconds',
  // Bounded: an update waits for its activity, so a long outage should fail the call (the agent retries), not hang it.
  retry: { initialInterval: '500 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 5, nonRetryableErrorTypes: [ONBOARDING_FAILURES.handleTaken] },
});

const refuse = (type: string, message: string): ApplicationFailure => ApplicationFailure.nonRetryable(message, type);

function requireStage(state: OnboardingState, allowed: (s: OnboardingStage) => boolean, needed: OnboardingStage): void {
  if (!allowed(state.stage)) throw refuse(ONBOARDING_FAILURES.stage, `this step needs stage ${needed}; the borrower is at ${state.stage}`);
}

const atLeast = (min: OnboardingStage) => (s: OnboardingStage) => stageIndex(s) >= stageIndex(min);

function checkAgentKey(state: OnboardingState, a: RegisterAgentKeyArgs): void {
  if (state.applied[a.signingRequestId]) return;
  if (a.rotate) requireStage(state, atLeast('AGENT_KEY_REGISTERED'), 'AGENT_KEY_REGISTERED');
  else {
    requireStage(state, atLeast('FACILITY_ACCEPTED'), 'FACILITY_ACCEPTED');
    if (state.agentKeys.some((k) => k.operationalAgentId === a.operationalAgentId && k.status === 'active')) {
      throw refuse(ONBOARDING_FAILURES.invalid, 'this operational agent already has an active key; use rotate_agent_key');
    }
  }
}

/**
 * One borrower's onboarding, WALLET_VERIFIED -> FACILITY_ACCEPTED -> AGENT_KEY_REGISTERED -> ACTIVE.
 * Each update writes the store mirror through an activity before it returns, so the next token
 * and every status read see the new stage. Stages only move forward.
 */
export async function onboardingWorkflow(input: OnboardingInput): Promise<void> {
  const state: OnboardingState = input.state ?? { borrowerId: input.borrowerId, wallet: input.wallet, stage: 'WALLET_VERIFIED', agentKeys: [], applied: {} };
  let busy = false;
  // Validators pass on the state they see; handlers then run one at a time and re-check it.
  const exclusive = async <T>(fn: () => Promise<T>): Promise<T> => {
    await condition(() => !busy);
    busy = true;
    try {
      return await fn();
    } finally {
      busy = false;
    }
  };

  setHandler(onboardingStateQuery, () => state);

  setHandler(
    acceptFacilityUpdate,
    (a) =>
      exclusive(async () => {
        const done = state.applied[a.signingRequestId];
        if (done) return done as { credit_limit: string; stage: OnboardingStage };
        requireStage(state, (s) => s === 'WALLET_VERIFIED', 'WALLET_VERIFIED');
        await acts.recordFacilityAccepted({ borrowerId: state.borrowerId, creditLimit: a.creditLimit });
        state.stage = 'FACILITY_ACCEPTED';
        state.creditLimit = a.creditLimit;
        const result = { credit_limit: a.creditLimit, stage: state.stage };
        state.applied[a.signingRequestId] = result;
        return result;
      }),
    {
      validator: (a) => {
        if (!state.applied[a.signingRequestId]) requireStage(state, (s) => s === 'WALLET_VERIFIED', 'WALLET_VERIFIED');
      },
    },
  );

  setHandler(
    registerAgentKeyUpdate,
    (a) =>
      exclusive(async () => {
        const done = state.applied[a.signingRequestId];
        if (done) return done as { key_id: string; stage: OnboardingStage; revoked_key_ids: string[] };
        checkAgentKey(state, a);
        const { revokedKeyIds } = await acts.recordAgentKey({ borrowerId: state.borrowerId, key: a });
        for (const k of state.agentKeys) if (revokedKeyIds.includes(k.keyId)) k.status = 'revoked';
        state.agentKeys.push({ keyId: a.keyId, operationalAgentId: a.operationalAgentId, status: 'active' });
        if (state.stage === 'FACILITY_ACCEPTED') state.stage = 'AGENT_KEY_REGISTERED';
        const result = { key_id: a.keyId, stage: state.stage, revoked_key_ids: revokedKeyIds };
        state.applied[a.signingRequestId] = result;
        return result;
      }),
    { validator: (a) => checkAgentKey(state, a) },
  );

  const checkHandle = (handle: string) => {
    requireStage(state, atLeast('AGENT_KEY_REGISTERED'), 'AGENT_KEY_REGISTERED');
    if (state.handle !== undefined && state.handle !== handle) throw refuse(ONBOARDING_FAILURES.invalid, `the borrower already holds the handle ${state.handle}`);
  };
  setHandler(
    claimHandleUpdate,
    (a) =>
      exclusive(async () => {
        checkHandle(a.handle);
        if (state.handle === a.handle) return { handle: a.handle, stage: state.stage };
        try {
          await acts.recordHandle({ borrowerId: state.borrowerId, handle: a.handle });
        } catch (err) {
          // Re-raise the activity's own failure type so the client can tell "taken" from "unavailable".
          if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === ONBOARDING_FAILURES.handleTaken) {
            throw refuse(ONBOARDING_FAILURES.handleTaken, 'that handle belongs to another borrower');
          }
          throw err;
        }
        state.handle = a.handle;
        state.stage = 'ACTIVE';
        return { handle: a.handle, stage: state.stage };
      }),
    { validator: (a) => checkHandle(a.handle) },
  );

  await condition(() => workflowInfo().continueAsNewSuggested && !busy && allHandlersFinished());
  await continueAsNew<typeof onboardingWorkflow>({ borrowerId: state.borrowerId, wallet: state.wallet, state });
}
