import { Context } from '@temporalio/activity';
import type { SettlementItem } from '../../src/chain/settlement.js';
import { submitSettleBatch } from '../../src/chain/settlement.js';
import { claimPaymentsForBatch } from '../../src/store/payments.js';
import type { ConfirmationResult, SettlementDeps, SettlementSettings } from '../../src/settlement/settings.js';
import { confirmOnChain } from '../../src/settlement/confirm-batch.js';

export type SettlementActivityDeps = SettlementDeps;
export type { SettlementSettings };

export type SubmitResult =
  | { kind: 'empty' }
  | { kind: 'sent' | 'already_settled'; paymentIds: string[]; transaction?: string };

export type { ConfirmationResult };

export function createSettlementActivities(deps: SettlementActivityDeps) {
  // Broadcast time and size per batch, for the latency and payments-settled metrics. Lost on a
  // worker restart, which only costs one latency sample.
  const inFlight = new Map<string, { sentAt: number; payments: number }>();
  return {
    async batcherSettings(): Promise<{ maxPayments: number; maxWaitMs: number; maxAttempts: number; shards: number; taskQueue?: string }> {
      const { maxPayments, maxWaitMs, maxAttempts, taskQueue } = deps.settings;
      return { maxPayments, maxWaitMs, maxAttempts, shards: deps.shards ?? 1, ...(taskQueue ? { taskQueue } : {}) };
    },

    /** Binds the payments to batchId in the store, then broadcasts one settleBatch transaction. */
    async submitBatch(input: { batchId: string; paymentIds: string[] }): Promise<SubmitResult> {
      const docs = await claimPaymentsForBatch(deps.store.c, input.batchId, input.paymentIds);
      if (docs.length === 0) return { kind: 'empty' };
      const items: SettlementItem[] = docs.map((d) => ({
        paymentId: d._id,
        borrowerId: d.borrowerId,
        merchantId: d.merchantId,
        payTo: d.payTo as `0x${string}`,
        amount: BigInt(d.amount),
      }));
      const paymentIds = docs.map((d) => d._id);
      const sent = await submitSettleBatch(deps.chain, input.batchId, items);
      if (sent.kind === 'sent') {
        inFlight.set(input.batchId, { sentAt: Date.now(), payments: items.length });
        deps.metrics?.batchSize.observe(items.length);
      }
      return sent.kind === 'sent' ? { kind: 'sent', paymentIds, transaction: sent.txHash } : { kind: 'already_settled', paymentIds };
    },

    /** Waits for the configured confirmations, heartbeating so a stuck wait is noticed and retried. */
    async awaitBatchConfirmation(input: { batchId: string; transaction: string | null }): Promise<ConfirmationResult> {
      const sent = inFlight.get(input.batchId);
      inFlight.delete(input.batchId);
      const ctx = Context.current();
      return confirmOnChain(deps, input.batchId, input.transaction, { ...(sent ? { sent } : {}), onProgress: (p) => ctx.heartbeat(p) });
    },
  };
}

export type SettlementActivities = ReturnType<typeof createSettlementActivities>;
