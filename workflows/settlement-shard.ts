import { allHandlersFinished, condition, continueAsNew, log, makeContinueAsNewFunc, patched, proxyActivities, proxyLocalActivities, setHandler, sleep, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ShardActivities } from '../activities/settlement-shard.js';
import type { SettlementActivities } from '../activities/legacy/settlement.js';
import type { BatchOutcome } from '../src/domain/payment.js';
import { resumeShardSignal, shardStateQuery, type SettlementShardInput, type ShardState } from '../src/temporal/definitions.js';

const retry = { initialInterval: '1 second', maximumInterval: '15 seconds', backoffCoefficient: 2 } as const;
const acts = proxyActivities<ShardActivities & SettlementActivities>({ startToCloseTimeout: '1 minute', retry });
// Gathering waits for payments (up to a minute when idle) and heartbeats, so a dead worker is noticed in seconds.
const gathering = proxyActivities<ShardActivities>({ startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry });
const confirmation = proxyActivities<ShardActivities>({ startToCloseTimeout: '15 minutes', heartbeatTimeout: '10 seconds', retry });
// Submit and batch end heartbeat while they run, so a dead worker's share is retried elsewhere in
// seconds rather than after the minute their start-to-close allows.
const batchStep = proxyActivities<ShardActivities>({ startToCloseTimeout: '1 minute', heartbeatTimeout: '10 seconds', retry });

// A batch id drawn outside the workflow's seeded randomness: a history replayed after a restore of
// Temporal older than the store or the chain draws new ids instead of reissuing settled ones.
const ids = proxyLocalActivities<ShardActivities>({ startToCloseTimeout: '5 seconds', retry });

const ROUNDS_PER_RUN = 200;
/** Batch ids come from newBatchId (a local activity) rather than the workflow's uuid4. */
const RANDOM_BATCH_IDS = 'shard-random-batch-ids';
/** A batch end's signals go out in their own activity beside the next batch (runs from before it notify inside endShardBatch). */
const NOTIFY_SEPARATELY = 'shard-notify-separately';
/** A shard continues as new on the settlement task queue (SETTLEMENT_TASK_QUEUE) when the worker names one. */
const OWN_TASK_QUEUE = 'shard-own-task-queue';
/** Two ended batches' signals may go out at once (runs from before it wait for the previous batch's before telling the next). */
const NOTIFY_TWO_AT_ONCE = 'shard-notify-two-at-once';

/** Set by the resumeShard signal: an operator asks a halted shard to check its batch again. */
interface Halt {
  resume: boolean;
}

/**
 * The ended batches whose payment workflows are being told: the latest (done) and, while it runs
 * too, the one before it (earlier). At most two at a time.
 */
interface Notifying {
  done: Promise<void> | undefined;
  earlier: Promise<void> | undefined;
}

/**
 * One settlement shard: gathers the accepted payments of its own queue into batches (at the batch
 * size, or when the oldest has waited the batch window), settles each batch with one settleBatch
 * transaction and ends it for every payment in one activity. Payments reach it through the store
 * queue, not signals, so its history grows per batch, never per payment.
 */
export async function settlementShardWorkflow(input: SettlementShardInput): Promise<void> {
  const { shard } = input;
  const state: ShardState = { shard, inFlight: null, halted: null, batchesSettled: input.batchesSettled ?? 0, paymentsSettled: input.paymentsSettled ?? 0 };
  setHandler(shardStateQuery, () => state);
  const halt: Halt = { resume: false };
  setHandler(resumeShardSignal, () => {
    halt.resume = true;
  });
  const { maxAttempts, shards, taskQueue } = await acts.batcherSettings();
  const notifying: Notifying = { done: undefined, earlier: undefined };

  for (let round = 0; round < ROUNDS_PER_RUN && !workflowInfo().continueAsNewSuggested; round++) {
    const batchId = patched(RANDOM_BATCH_IDS) ? await ids.newBatchId() : uuid4();
    const gathered = await gathering.gatherBatch({ shard, shards, batchId });
    if (gathered.paymentIds.length === 0) continue;
    await settle({ shard, batchId, paymentIds: gathered.paymentIds, queues: gathered.queues }, maxAttempts, state, notifying, halt);
  }

  await notifying.earlier;
  await notifying.done;
  await condition(allHandlersFinished);
  const next = { shard, shards, batchesSettled: state.batchesSettled, paymentsSettled: state.paymentsSettled };
  if (taskQueue && taskQueue !== workflowInfo().taskQueue && patched(OWN_TASK_QUEUE)) {
    await makeContinueAsNewFunc<typeof settlementShardWorkflow>({ taskQueue })(next);
  }
  await continueAsNew<typeof settlementShardWorkflow>(next);
}

interface Batch {
  shard: number;
  batchId: string;
  paymentIds: string[];
  queues: number[];
}

/**
 * Ends the batch, then has its payment workflows told in the background: the next batch gathers
 * and settles meanwhile. Each batch's signals are spread over SETTLEMENT_NOTIFY_SPREAD_MS, longer
 * than a lightly loaded shard's round (0.7-1.1 s at half the peak), so waiting for the previous
 * batch's to finish held every round to the spread; two batches' may now overlap, and a third
 * waits for the older of them. Under load a round outlasts the spread and they never overlap.
 */
async function end(batch: Batch, outcome: BatchOutcome, notifying: Notifying): Promise<void> {
  if (!patched(NOTIFY_SEPARATELY)) {
    await batchStep.endShardBatch({ ...batch, outcome });
    return;
  }
  await batchStep.endShardBatch({ ...batch, outcome, notify: 'separately' });
  if (patched(NOTIFY_TWO_AT_ONCE)) {
    await notifying.earlier;
    notifying.earlier = notifying.done;
  } else {
    await notifying.done;
  }
  const done = batchStep.notifyShardBatch({ ...batch, outcome });
  done.catch(() => undefined); // awaited before a later batch's or before continuing as new, which rethrow
  notifying.done = done;
}

/**
 * Submits until confirmed (a dropped transaction is resent, a revert retried up to maxAttempts), then
 * ends the batch. A batch that settled on chain with content other than its set halts the shard
 * here, nothing ended and nothing further sent, until an operator's resumeShard signal has it
 * checked again (docs/operations.md, "A shard halted").
 */
async function settle(batch: Batch, maxAttempts: number, state: ShardState, notifying: Notifying, halt: Halt): Promise<void> {
  const { batchId } = batch;
  try {
    for (let attempt = 1; ; attempt++) {
      state.inFlight = { batchId, payments: batch.paymentIds.length, attempt };
      const sent = await batchStep.submitShardBatch(batch);
      if (sent.transaction) state.inFlight.transaction = sent.transaction;
      const outcome = await confirmation.confirmShardBatch({ ...batch, transaction: sent.transaction ?? null });
      if (outcome.status === 'mismatch') {
        log.error('shard halted: a batch settled on chain with content other than its set', { batchId, reason: outcome.reason });
        state.halted = { batchId, reason: outcome.reason, transaction: outcome.transaction };
        halt.resume = false;
        await condition(() => halt.resume);
        state.halted = null;
        continue;
      }
      if (outcome.status === 'confirmed') {
        const { transaction, blockNumber, confirmedAt } = outcome;
        await end(batch, { status: 'CONFIRMED', batchId, transaction, blockNumber, confirmedAt }, notifying);
        state.batchesSettled += 1;
        state.paymentsSettled += batch.paymentIds.length;
        return;
      }
      if (outcome.status === 'reverted' && attempt >= maxAttempts) {
        log.error('batch failed after retries', { batchId, attempts: attempt });
        const failureReason = `settlement_reverted: batch transaction reverted ${attempt} times`;
        await end(batch, { status: 'FAILED', batchId, failureReason, transaction: outcome.transaction }, notifying);
        return;
      }
      await sleep(outcome.status === 'reverted' ? `${5 * attempt} seconds` : '1 second');
    }
  } finally {
    state.inFlight = null;
  }
}
