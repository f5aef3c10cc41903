import { Context } from '@temporalio/activity';
import type { ChainContext } from '../../src/chain/context.js';
import type { SettlementItem } from '../../src/chain/settlement.js';
import { awaitBatchConfirmation, findBatchSettlement, submitSettleBatch } from '../../src/chain/settlement.js';
import type { Store } from '../../src/store/mongo.js';
import { claimPaymentsForBatch } from '../../src/store/payments.js';
import type { WorkerMetrics } from '../../src/observability/metrics.js';

export interface SettlementActivityDeps {
  store: Store;
  chain: ChainContext;
  settings: SettlementSettings;
  /** SETTLEMENT_SHARDS: the shard workflows read it at each run, so a change takes effect without restarts. */
  shards?: number;
  metrics?: WorkerMetrics;
}

export interface SettlementSettings {
  maxPayments: number;
  maxWaitMs: number;
  maxAttempts: number;
  confirmations: number;
  /** The largest batch a shard takes while a backlog waits. */
  maxPaymentsUnderBacklog: number;
  shardPollMs: number;
  /** How long a batch end spreads its payment-workflow signals over (notify-payments.ts). */
  notifySpreadMs?: number;
}

export type SubmitResult =
  | { kind: 'empty' }
  | { kind: 'sent' | 'already_settled'; paymentIds: string[]; transaction?: string };

export type ConfirmationResult =
  | { status: 'confirmed'; transaction: string; blockNumber: string; confirmedAt: string; gasUsed: string }
  | { status: 'reverted'; transaction: string }
  | { status: 'dropped' };

export function createSettlementActivities(deps: SettlementActivityDeps) {
  // Broadcast time and size per batch, for the latency and payments-settled metrics. Lost on a
  // worker restart, which only costs one latency sample.
  const inFlight = new Map<string, { sentAt: number; payments: number }>();
  return {
    async batcherSettings(): Promise<{ maxPayments: number; maxWaitMs: number; maxAttempts: number; shards: number }> {
      const { maxPayments, maxWaitMs, maxAttempts } = deps.settings;
      return { maxPayments, maxWaitMs, maxAttempts, shards: deps.shards ?? 1 };
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
      return confirmOnChain(deps, input.batchId, input.transaction, sent);
    },
  };
}

export type SettlementActivities = ReturnType<typeof createSettlementActivities>;

/**
 * Polls the chain until the batch is confirmed at depth, reverted or dropped (see
 * src/chain/settlement.ts), heartbeating its progress; records the batch metrics.
 */
export async function confirmOnChain(
  deps: Pick<SettlementActivityDeps, 'chain' | 'settings' | 'metrics'>,
  batchId: string,
  transaction: string | null,
  sent?: { sentAt: number; payments: number },
  pollMs = 500,
): Promise<ConfirmationResult> {
  const ctx = Context.current();
  let txHash = transaction as `0x${string}` | null;
  if (txHash === null) {
    const found = await findBatchSettlement(deps.chain, batchId);
    if (!found) return { status: 'dropped' };
    txHash = found.txHash;
  }
  const r = await awaitBatchConfirmation(deps.chain, {
    batchId,
    txHash,
    confirmations: deps.settings.confirmations,
    pollMs,
    timeoutMs: 10 * 60_000,
    onProgress: (p: unknown) => ctx.heartbeat(p),
    currentHash: deps.chain.nonces && ((h) => deps.chain.nonces!.currentHash(h)),
  });
  deps.metrics?.batches.inc({ outcome: r.status });
  if (r.status === 'confirmed') {
    if (sent) {
      deps.metrics?.settleLatency.observe((Date.now() - sent.sentAt) / 1000);
      deps.metrics?.paymentsSettled.inc(sent.payments);
    }
    deps.metrics?.gasUsed.inc(Number(r.gasUsed));
    return {
      status: 'confirmed',
      transaction: r.txHash,
      blockNumber: r.blockNumber.toString(),
      confirmedAt: new Date(r.confirmedAt * 1000).toISOString(),
      gasUsed: r.gasUsed.toString(),
    };
  }
  return r.status === 'reverted' ? { status: 'reverted', transaction: r.txHash } : { status: 'dropped' };
}
