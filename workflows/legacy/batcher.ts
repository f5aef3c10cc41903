import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setHandler,
  sleep,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { SettlementActivities } from '../../activities/legacy/settlement.js';
import {
  batchConfirmedSignal,
  batcherStateQuery,
  batchRequeuedSignal,
  batchSubmittedSignal,
  enqueuePaymentSignal,
  paymentFailedSignal,
  type BatcherState,
} from '../../src/temporal/definitions.js';

// Short timeouts are what make a crashed worker's activities retry quickly on another worker.
const acts = proxyActivities<SettlementActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds', backoffCoefficient: 2 },
});
const confirmation = proxyActivities<SettlementActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds', backoffCoefficient: 2 },
});

export interface BatcherInput {
  queue: string[];
  /** Payments settled recently, so a late duplicate enqueue is dropped without a round trip. */
  recent?: string[];
  batchesSettled?: number;
  paymentsSettled?: number;
}

const RECENT_LIMIT = 5000;
const CYCLES_PER_RUN = 500;

/**
 * The one long-running settlement loop. Queue in, batches out: a batch closes at maxPayments or
 * after maxWaitMs, is submitted once per attempt with the same batchId (the contract ignores a
 * settled batchId), and each payment hears how its batch ended.
 */
export async function batcherWorkflow(input: BatcherInput = { queue: [] }): Promise<void> {
  const settings = await acts.batcherSettings();
  const queue = [...input.queue];
  const known = new Set(queue);
  const recent = [...(input.recent ?? [])];
  const recentSet = new Set(recent);
  const state: BatcherState = { queued: 0, inFlight: null, batchesSettled: input.batchesSettled ?? 0, paymentsSettled: input.paymentsSettled ?? 0 };

  setHandler(enqueuePaymentSignal, ({ paymentId }) => {
    if (known.has(paymentId) || recentSet.has(paymentId)) return;
    known.add(paymentId);
    queue.push(paymentId);
  });
  setHandler(batcherStateQuery, () => ({ ...state, queued: queue.length }));

  for (let cycle = 0; cycle < CYCLES_PER_RUN && !workflowInfo().continueAsNewSuggested; cycle++) {
    await condition(() => queue.length > 0);
    if (queue.length < settings.maxPayments) await condition(() => queue.length >= settings.maxPayments, settings.maxWaitMs);
    const ids = queue.splice(0, settings.maxPayments);
    const settled = await settle(uuid4(), ids, settings.maxAttempts, state);
    for (const id of ids) known.delete(id);
    for (const id of settled) {
      recent.push(id);
      recentSet.add(id);
    }
    while (recent.length > RECENT_LIMIT) recentSet.delete(recent.shift() as string);
  }

  await condition(allHandlersFinished);
  await continueAsNew<typeof batcherWorkflow>({
    queue,
    recent,
    batchesSettled: state.batchesSettled,
    paymentsSettled: state.paymentsSettled,
  });
}

async function settle(batchId: string, ids: string[], maxAttempts: number, state: BatcherState): Promise<string[]> {
  state.inFlight = { batchId, payments: ids.length };
  try {
    for (let attempt = 1; ; attempt++) {
      const sub = await acts.submitBatch({ batchId, paymentIds: ids });
      if (sub.kind === 'empty') return [];
      const included = sub.paymentIds;
      state.inFlight = { batchId, payments: included.length, ...(sub.transaction ? { transaction: sub.transaction } : {}) };
      if (sub.transaction) await signalAll(included, (h) => h.signal(batchSubmittedSignal, { batchId, transaction: sub.transaction as string }));

      const outcome = await confirmation.awaitBatchConfirmation({ batchId, transaction: sub.transaction ?? null });
      if (outcome.status === 'confirmed') {
        const c = { batchId, transaction: outcome.transaction, blockNumber: outcome.blockNumber, confirmedAt: outcome.confirmedAt };
        await signalAll(included, (h) => h.signal(batchConfirmedSignal, c));
        state.batchesSettled += 1;
        state.paymentsSettled += included.length;
        return included;
      }
      const reason = outcome.status === 'reverted' ? 'batch transaction reverted' : 'batch transaction dropped';
      if (sub.transaction) await signalAll(included, (h) => h.signal(batchRequeuedSignal, { batchId, reason }));
      if (outcome.status === 'reverted' && attempt >= maxAttempts) {
        log.error('batch failed after retries', { batchId, attempts: attempt });
        await signalAll(included, (h) => h.signal(paymentFailedSignal, { batchId, reason: `settlement_reverted: ${reason} ${attempt} times` }));
        return [];
      }
      await sleep(outcome.status === 'reverted' ? `${5 * attempt} seconds` : '1 second');
    }
  } finally {
    state.inFlight = null;
  }
}

type Handle = ReturnType<typeof getExternalWorkflowHandle>;

async function signalAll(ids: string[], send: (h: Handle) => Promise<void>): Promise<void> {
  await Promise.all(
    ids.map((id) =>
      send(getExternalWorkflowHandle(id)).catch((err: unknown) => {
        log.warn('could not signal payment workflow', { paymentId: id, error: String(err) });
      }),
    ),
  );
}
