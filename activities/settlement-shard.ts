import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { BatchOutcome } from '../src/domain/payment.js';
import type { ConfirmationResult } from '../src/settlement/settings.js';
import { createShardSettlement, type ShardBatchRef, type ShardDeps, type StepContext } from '../src/settlement/shard.js';
import type { PaymentWorkflowInput } from '../src/temporal/definitions.js';
import type { BATCH_STEPS } from '../src/observability/settlement-metrics.js';
import { heartbeatWhileRunning } from './heartbeat-while-running.js';

export type ShardActivityDeps = ShardDeps;
export type { ShardBatchRef };

/** The running activity as the shard's steps see it. */
function stepContext(): StepContext {
  const ctx = Context.current();
  return { heartbeat: (d) => ctx.heartbeat(d), sleep: (ms) => ctx.sleep(ms), log: (msg, fields) => ctx.log.info(msg, fields) };
}

/** The settlement shard's activities: each runs one step of src/settlement/shard.ts. */
export function createShardActivities(deps: ShardActivityDeps) {
  const shard = createShardSettlement(deps);
  /** Times one attempt of a batch step in x402_batch_step_seconds{step,outcome}. */
  const timed = async <T>(step: (typeof BATCH_STEPS)[number], run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let outcome = 'error';
    try {
      const result = await run();
      outcome = 'ok';
      return result;
    } finally {
      deps.metrics?.settlement.batchSteps.observe({ step, outcome }, (performance.now() - started) / 1000);
    }
  };
  return {
    /** A new batch id (a local activity: drawn afresh when a history is replayed past where it was recorded). */
    newBatchId: async (): Promise<string> => randomUUID(),
    /** Puts a payment started without its queue entry (by an API older than shards) in its queue. */
    enqueuePayment: (input: PaymentWorkflowInput): Promise<void> => shard.enqueuePayment(input),
    gatherBatch: (input: { shard: number; shards: number; batchId: string }): Promise<{ paymentIds: string[]; queues: number[] }> =>
      shard.gatherBatch(input, stepContext(), Context.current().info.attempt),
    submitShardBatch: (ref: ShardBatchRef): Promise<{ transaction?: string }> => timed('submit', () => heartbeatWhileRunning(() => shard.submitBatch(ref, stepContext()))),
    confirmShardBatch: (ref: ShardBatchRef & { transaction: string | null }): Promise<ConfirmationResult> => timed('confirm', () => shard.confirmBatch(ref, stepContext())),
    endShardBatch: (ref: ShardBatchRef & { outcome: BatchOutcome; notify?: 'separately' }): Promise<void> => timed('end', () => heartbeatWhileRunning(() => shard.endBatch(ref))),
    notifyShardBatch: (ref: ShardBatchRef & { outcome: BatchOutcome }): Promise<void> => timed('notify', () => heartbeatWhileRunning(() => shard.notifyBatch(ref))),
  };
}

export type ShardActivities = ReturnType<typeof createShardActivities>;
