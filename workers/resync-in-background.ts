import { AcceptedCaptures } from '../src/settlement/accepted-captures.js';
import { resyncFromChain } from '../src/settlement/chain-resync.js';
import { createShardSettlement, type ShardDeps } from '../src/settlement/shard.js';
import type { Logger } from '../src/observability/logger.js';

const RETRY_MS = 30_000;
/** After a completed resync, the next: a chain that lost blocks (a node restarted on older state) is followed within a minute or so. */
const EVERY_MS = 60_000;

/**
 * Starts the chain resync (src/settlement/chain-resync.ts) beside the worker's start, never in
 * front of it: a worker restarted after a crash must poll again within seconds, and nothing waits
 * on the resync for safety (a payment in a decided set is claimed by that batch, so no shard gathers
 * it again; backups copy the chain first, so the chain never paid a payment the store does not
 * know). It finishes what a restore left open: batches to end, to send again or to abandon, and
 * follows a chain that lost blocks. It runs again every minute after it completes; a chain or store
 * that does not answer is retried every 30 s.
 */
export function resyncInBackground(deps: Omit<ShardDeps, 'accepted'>, logger: Logger): void {
  const shardDeps: ShardDeps = { ...deps, accepted: new AcceptedCaptures() };
  const steps = createShardSettlement(shardDeps);
  const log = (msg: string, fields: Record<string, unknown>) => (msg.includes('CONFLICT') ? logger.error(msg, fields) : logger.info(msg, fields));
  let runs = 0;
  const attempt = async () => {
    const report = await resyncFromChain(shardDeps, steps, log);
    const changed = report.settledOnChain.length + report.abandoned.length + report.resent.length + report.moved.length + report.conflicts.length > 0;
    if (changed) logger.warn('chain resync done', { ...report });
    else if (runs === 0) logger.info('chain resync done', { ...report });
    runs += 1;
  };
  const run = () => {
    attempt()
      .then(() => setTimeout(run, EVERY_MS).unref())
      .catch((err: unknown) => {
        logger.warn('chain resync failed; retrying in 30 s', { error: err });
        setTimeout(run, RETRY_MS).unref();
      });
  };
  run();
}
