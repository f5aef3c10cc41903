import { AcceptedCaptures } from '../src/settlement/accepted-captures.js';
import { resyncFromChain } from '../src/settlement/chain-resync.js';
import { createShardSettlement, type ShardDeps } from '../src/settlement/shard.js';
import type { Logger } from '../src/observability/logger.js';

const RETRY_MS = 30_000;

/**
 * Starts the chain resync (src/settlement/chain-resync.ts) beside the worker's start, never in
 * front of it: a worker restarted after a crash must poll again within seconds, and nothing waits
 * on the resync for safety (a payment in a decided set is claimed by that batch, so no shard gathers
 * it again; backups copy the chain first, so the chain never paid a payment the store does not
 * know). It finishes what a restore left open: batches to end, to send again or to abandon. A chain
 * or store that does not answer is retried every 30 s until the resync completes.
 */
export function resyncInBackground(deps: Omit<ShardDeps, 'accepted'>, logger: Logger): void {
  const shardDeps: ShardDeps = { ...deps, accepted: new AcceptedCaptures() };
  const steps = createShardSettlement(shardDeps);
  const log = (msg: string, fields: Record<string, unknown>) => (msg.includes('CONFLICT') ? logger.error(msg, fields) : logger.info(msg, fields));
  const attempt = async () => {
    const report = await resyncFromChain(shardDeps, steps, log);
    const changed = report.settledOnChain.length + report.abandoned.length + report.resent.length + report.conflicts.length > 0;
    (changed ? logger.warn : logger.info).call(logger, 'chain resync done', { ...report });
  };
  const run = () => {
    attempt().catch((err: unknown) => {
      logger.warn('chain resync failed; retrying in 30 s', { error: err });
      setTimeout(run, RETRY_MS).unref();
    });
  };
  run();
}
