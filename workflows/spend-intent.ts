import { proxyActivities, sleep } from '@temporalio/workflow';
import type { OnboardingActivities } from '../activities/onboarding.js';
import type { SpendIntentWorkflowInput } from '../src/temporal/agent-definitions.js';

const acts = proxyActivities<OnboardingActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/**
 * Gives an unused spend intent's credit back. A capture that consumed the intent first wins (the
 * expiry is a conditional RESERVED -> EXPIRED); its payment workflow then owns the hold.
 */
export async function spendIntentWorkflow(input: SpendIntentWorkflowInput): Promise<'expired' | 'consumed'> {
  const wait = input.releaseAtMs - Date.now();
  if (wait > 0) await sleep(wait);
  return acts.expireSpendIntent({
    spendIntentId: input.spendIntentId,
    borrowerId: input.borrowerId,
    ...(input.spendDayId ? { spendDayId: input.spendDayId } : {}),
  });
}
