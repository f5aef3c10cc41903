import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

/**
 * A deliberately incompatible paymentWorkflow for test/unit/workflow-replay.test.ts: the
 * recorded payment histories start with the enqueueForSettlement local activity; this one
 * schedules a different (regular) activity first, so their replay must fail with a determinism
 * error. Proof that the replay test can fail. Never registered on a real worker.
 */
const acts = proxyActivities<{ releaseCredit(input: { paymentId: string }): Promise<void> }>({ startToCloseTimeout: '10 seconds' });
const local = proxyLocalActivities<{ enqueueForSettlement(input: { paymentId: string }): Promise<void> }>({ startToCloseTimeout: '10 seconds' });

export async function paymentWorkflow(input: { paymentId: string }): Promise<void> {
  await acts.releaseCredit({ paymentId: input.paymentId });
  await local.enqueueForSettlement({ paymentId: input.paymentId });
}
