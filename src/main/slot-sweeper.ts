import type { Logger } from '../observability/logger.js';
import type { Collections } from '../store/collections.js';
import { sweepExpiredSlots } from '../store/rate-limits.js';
import { sweepSpentTokens } from '../store/spent-tokens.js';

/**
 * Removes passed rate-limit slots and expired spent tokens every `everyMs`, off the request path:
 * the sweeps filter on expiresAt, which FerretDB v1 answers by scanning the collection.
 */
export function startSlotSweeper(c: Collections, logger: Logger, everyMs = 60_000): { stop(): void } {
  const timer = setInterval(() => {
    sweepExpiredSlots(c, new Date()).catch((err: unknown) => logger.warn('rate-limit slot sweep failed', { error: err }));
    sweepSpentTokens(c, new Date()).catch((err: unknown) => logger.warn('spent token sweep failed', { error: err }));
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
