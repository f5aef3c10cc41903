import { AcceptedCaptures } from '../src/settlement/accepted-captures.js';
import { resyncFromChain } from '../src/settlement/chain-resync.js';
import { createShardSettlement, type ShardDeps } from '../src/settlement/shard.js';
import type { Logger } from '../src/observability/logger.js';

const FIRST_TRY_MS = 60_000;
const RETRY_MS = 30_000;

/**
 * Runs the chain resync (src/settlement/chain-resync.ts) before the worker polls, so that after a
 * restore no shard gathers a payment the chain already paid. A chain or store that does not answer
 * within a minute does not keep the worker down: it starts, and the resync is retried every 30 s
 * until it completes (logged either way).
 */
export async function resyncAtStart(deps: Omit<ShardDeps, 'accepted'>, logger: Logger): Promise<void> {
  const shardDeps: ShardDeps = { ...deps, accepted: new AcceptedCaptures() };
  const steps = createShardSettlement(shardDeps);
  const log = (msg: string, fields: Record<string, unknown>) => (msg.includes('CONFLICT') ? logger.error(msg, fields) : logger.info(msg, fields));
  const attempt = async () => {
    const report = await resyncFromChain(shardDeps, steps, log);
    const changed = report.settledOnChain.length + report.abandoned.length + report.conflicts.length > 0;
    (changed ? logger.warn : logger.info).call(logger, 'chain resync done', { ...report });
  };
  const first = attempt();
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), FIRST_TRY_MS).unref());
  try {
    if ((await Promise.race([first.then(() => 'done' as const), timeout])) === 'done') return;
    logger.warn('chain resync still running after a minute; the worker starts meanwhile', {});
  } catch (err) {
    logger.warn('chain resync failed; retrying in the background', { error: err });
  }
  const retry = () =>
    setTimeout(() => {
      attempt().catch((err: unknown) => {
        logger.warn('chain resync failed; retrying', { error: err });
        retry();
      });
    }, RETRY_MS).unref();
  first.catch(() => retry());
}
