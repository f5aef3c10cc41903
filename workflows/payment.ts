import { condition, patched, proxyLocalActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { ShardActivities } from '../activities/settlement-shard.js';
import { initialPaymentState, isTerminal, settledPaymentState, type PaymentState } from '../src/domain/payment.js';
import { paymentSettledSignal, paymentStatusQuery, type PaymentWorkflowInput } from '../src/temporal/definitions.js';
import { legacyPaymentFlow } from './legacy/payment.js';

const { enqueuePayment } = proxyLocalActivities<ShardActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

/** Payments started before settlement shards replay the legacy flow; new ones record this marker. */
export const LEAN_SETTLEMENT_PATCH = 'lean-settlement-shards';

/**
 * One payment from capture to a terminal state (the type this code starts, PAYMENT_WORKFLOW_TYPE).
 * Its settlement shard settles it and, once the batch ends, sends it one signal with the outcome
 * (the shard has already written the store projection and booked the credit for the whole batch).
 * Nothing else happens per payment here: no activities, no timers, no patch marker, so a payment
 * costs one start, one workflow task and seven history events.
 */
export async function paymentWorkflowV2(input: PaymentWorkflowInput): Promise<PaymentState> {
  return leanPaymentFlow(input);
}

/**
 * The type releases before paymentWorkflowV2 started. Kept, unchanged, so payments they started
 * finish: a shard's signal-with-start of the new type reaches a running execution of this one.
 */
export async function paymentWorkflow(input: PaymentWorkflowInput): Promise<PaymentState> {
  if (!patched(LEAN_SETTLEMENT_PATCH)) return legacyPaymentFlow(input);
  return leanPaymentFlow(input);
}

async function leanPaymentFlow(input: PaymentWorkflowInput): Promise<PaymentState> {
  let state = initialPaymentState();
  setHandler(paymentStatusQuery, () => state);
  setHandler(paymentSettledSignal, (outcome) => {
    if (!isTerminal(state.status)) state = settledPaymentState(outcome);
  });
  if (!input.queued) await enqueuePayment(input);
  await condition(() => isTerminal(state.status));
  upsertSearchAttributes({ PaymentStatus: [state.status], BatchId: state.batchId ? [state.batchId] : [] });
  return state;
}
