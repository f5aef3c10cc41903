import { condition, log, proxyLocalActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { initialPaymentState, isTerminal, nextPaymentState, PaymentTransitionError, type PaymentEvent, type PaymentState } from '../../src/domain/payment.js';
import type { PaymentActivities } from '../../activities/legacy/payments.js';
import {
  batchConfirmedSignal,
  batchRequeuedSignal,
  batchSubmittedSignal,
  paymentFailedSignal,
  paymentStatusQuery,
  type PaymentWorkflowInput,
} from '../../src/temporal/definitions.js';

// Local activities: each is one short store write or signal, so running it inside the workflow
// task (a marker in history) spares the server a task-queue round trip per step; several per payment.
const acts = proxyLocalActivities<PaymentActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

/** If no batch picks the payment up in this long, it asks the batcher again (which de-duplicates). */
const REENQUEUE_AFTER = '10 minutes';

/**
 * The payment workflow as it ran before settlement shards (kept unchanged so payments already in
 * flight replay and finish): the single batcher drives it with signals; each move is projected to
 * the store and the search attributes. New payments take the lean path in payment.ts.
 */
export async function legacyPaymentFlow(input: PaymentWorkflowInput): Promise<PaymentState> {
  let state = initialPaymentState();
  let projected: PaymentState | null = null;

  const apply = (event: PaymentEvent) => {
    try {
      state = nextPaymentState(state, event);
    } catch (err) {
      if (!(err instanceof PaymentTransitionError)) throw err;
      state = recover(state, event, err);
    }
  };
  setHandler(paymentStatusQuery, () => state);
  setHandler(batchSubmittedSignal, (s) => apply({ type: 'submitted', batchId: s.batchId, transaction: s.transaction }));
  setHandler(batchConfirmedSignal, (s) => apply({ type: 'confirmed', ...s }));
  setHandler(batchRequeuedSignal, (s) => apply({ type: 'requeued', reason: s.reason }));
  setHandler(paymentFailedSignal, (s) => apply({ type: 'failed', reason: s.reason }));

  await acts.enqueueForSettlement({ paymentId: input.paymentId });

  while (!(isTerminal(state.status) && projected === state)) {
    const moved = await condition(() => projected !== state, REENQUEUE_AFTER);
    if (!moved) {
      if (state.status === 'QUEUED') await acts.enqueueForSettlement({ paymentId: input.paymentId });
      continue;
    }
    const target: PaymentState = state;
    await acts.recordPaymentProjection({ paymentId: input.paymentId, state: target });
    upsertSearchAttributes({ PaymentStatus: [target.status], BatchId: target.batchId ? [target.batchId] : [] });
    projected = target;
  }

  const credit = { borrowerId: input.borrowerId, holdId: input.spendIntentId };
  if (state.status === 'CONFIRMED') await acts.bookConfirmedCredit(credit);
  else await acts.releaseCredit(credit);
  return state;
}

/** Out-of-order or repeated batch signals that the pure state machine rejects but we can absorb. */
function recover(state: PaymentState, event: PaymentEvent, err: PaymentTransitionError): PaymentState {
  if (event.type === 'confirmed' && state.status === 'QUEUED') {
    return nextPaymentState(nextPaymentState(state, { type: 'submitted', batchId: event.batchId, transaction: event.transaction }), event);
  }
  if (event.type === 'submitted' && state.status === 'SUBMITTED' && state.batchId === event.batchId) {
    return { ...state, transaction: event.transaction };
  }
  if (event.type === 'confirmed' && state.status === 'SUBMITTED' && state.batchId === event.batchId) {
    return nextPaymentState({ ...state, transaction: event.transaction }, event);
  }
  log.warn('ignored payment signal', { from: state.status, event: event.type, error: err.message });
  return state;
}
