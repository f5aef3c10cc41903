import type { ChainContext } from '../chain/context.js';
import type { WorkerMetrics } from '../observability/metrics.js';
import type { Store } from '../store/mongo.js';

/** SETTLEMENT_* in the environment: how shards gather, send and confirm batches. */
export interface SettlementSettings {
  maxPayments: number;
  /** Ready payments that make a batch due at once (BATCH_MIN_PAYMENTS; absent: maxPayments, the fixed window). */
  minPayments?: number;
  maxWaitMs: number;
  maxAttempts: number;
  confirmations: number;
  /** The largest batch a shard takes while a backlog waits. */
  maxPaymentsUnderBacklog: number;
  shardPollMs: number;
  /** How long a batch end spreads its payment-workflow signals over (notify-payments.ts). */
  notifySpreadMs?: number;
  /** SETTLEMENT_TASK_QUEUE: where the shard workflows run (they move there when they continue as new). */
  taskQueue?: string;
}

/** What settling on chain uses: the store, the settler's chain context, the settings, metrics. */
export interface SettlementDeps {
  store: Store;
  chain: ChainContext;
  settings: SettlementSettings;
  /** SETTLEMENT_SHARDS: the shard workflows read it at each run, so a change takes effect without restarts. */
  shards?: number;
  metrics?: WorkerMetrics;
}

/** The batch as the chain left it, in the shape the shard workflow keeps in its history. */
export type ConfirmationResult =
  | { status: 'confirmed'; transaction: string; blockNumber: string; confirmedAt: string; gasUsed: string }
  | { status: 'reverted'; transaction: string }
  | { status: 'dropped' }
  /** Settled on chain with content other than the batch's set: the shard halts (workflows/settlement-shard.ts). */
  | { status: 'mismatch'; transaction: string; reason: string };
