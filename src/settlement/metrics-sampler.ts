import { assetBalanceOf } from '../chain/settlement.js';
import type { ChainContext } from '../chain/context.js';
import type { WorkerMetrics } from '../observability/metrics.js';
import type { Store } from '../store/mongo.js';
import { oldestQueuedAt } from '../store/settlement/queue.js';

export interface SamplerDeps {
  store: Pick<Store, 'c' | 'db'>;
  chain: ChainContext;
  metrics: WorkerMetrics;
  /** SETTLEMENT_SHARDS: a queue numbered past it belongs to shard queue % shards. */
  shards: number;
  /** Told once when a reading starts failing, and once when it works again. */
  log: (msg: string, fields: Record<string, unknown>) => void;
}

/**
 * The gauges that need a read of the store or the chain, sampled off the hot path: the oldest
 * queued payment per shard, the settler's gas and the pool's balance, the chain head, the
 * settler's pending transactions and nonce gap. Each reading runs on its own, so a node that does
 * not answer leaves the store's readings current (and the other way round).
 */
export function createMetricsSampler(deps: SamplerDeps) {
  const { chain, metrics } = deps;
  const failing = new Set<string>();
  const reading = async (what: string, read: () => Promise<void>) => {
    try {
      await read();
      if (failing.delete(what)) deps.log('metrics sampling works again', { reading: what });
    } catch (err) {
      if (!failing.has(what)) deps.log('metrics sampling failed; the gauge keeps its last value', { reading: what, error: err instanceof Error ? err.message.split('\n')[0] : String(err) });
      failing.add(what);
    }
  };

  const queues = async () => {
    const byQueue = await oldestQueuedAt(deps.store.c, deps.store.db);
    const byShard = new Map<number, number>();
    for (const [queue, at] of byQueue) {
      const shard = queue % deps.shards;
      byShard.set(shard, Math.min(byShard.get(shard) ?? Infinity, at.getTime()));
    }
    for (let shard = 0; shard < deps.shards; shard++) metrics.settlement.oldestQueuedAge.set(String(shard), byShard.get(shard));
  };

  const balances = async () => {
    const [gas, pool] = await Promise.all([
      chain.publicClient.getBalance({ address: chain.account.address }),
      assetBalanceOf(chain, chain.deployment.settlement),
    ]);
    metrics.chain.settlerBalance.set(Number(gas));
    metrics.chain.poolBalance.set(Number(pool));
  };

  const transactions = async () => {
    metrics.chain.headBlock.set(Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 })));
    const nonces = chain.nonces;
    if (!nonces) return;
    metrics.chain.txPending.set(nonces.pending);
    const next = nonces.nextNonce;
    if (next === undefined) return metrics.chain.nonceGap.set(0);
    const known = await chain.publicClient.getTransactionCount({ address: chain.account.address, blockTag: 'pending' });
    metrics.chain.nonceGap.set(Math.max(0, next - known));
  };

  return {
    sample: () => Promise.all([reading('settlement queues', queues), reading('balances', balances), reading('transactions', transactions)]).then(() => undefined),
  };
}

/** Samples at once, then every `everyMs` (a round still running skips the next tick) until stop(). */
export function startMetricsSampler(deps: SamplerDeps, everyMs: number): { stop(): void } {
  const sampler = createMetricsSampler(deps);
  let busy = false;
  const tick = () => {
    if (busy) return;
    busy = true;
    void sampler.sample().finally(() => {
      busy = false;
    });
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
