import type { Logger } from '../observability/logger.js';
import type { StatusDeps } from './status.js';
import { statusCacheOf } from './status.js';
import { PaymentStatusWaiters, type WaitSource } from './status-waiters.js';

/** The status cache's board refresh (BOARD_TTL_MS in status-cache.ts): waiters need it no more often. */
const TICK_MS = 250;
/** As the cache's claim recheck: a payment whose view did not move is re-read at most this often. */
const RECHECK_MS = 5_000;

/** The waiters' view of settlement: the status cache polls answer from, refreshed by one board read per tick. */
export function cacheWaitSource(deps: StatusDeps): WaitSource {
  const cache = statusCacheOf(deps);
  return {
    refresh: (nowMs) => cache.refresh(deps.store.c, deps.env.SETTLEMENT_SHARDS, nowMs),
    signal: (paymentId) => cache.settlementSignal(paymentId),
  };
}

/** One process's long-poll waiters (PAYMENT_WAIT_MAX_WAITERS of them at most). */
export function statusWaitersFor(deps: StatusDeps, logger: Pick<Logger, 'warn'>): PaymentStatusWaiters {
  let warnedAtMs = -Infinity;
  return new PaymentStatusWaiters(cacheWaitSource(deps), {
    maxWaiters: deps.env.PAYMENT_WAIT_MAX_WAITERS,
    tickMs: TICK_MS,
    recheckMs: RECHECK_MS,
    nowMs: deps.nowMs,
    onError: (err) => {
      const now = deps.nowMs();
      if (now - warnedAtMs < 10_000) return; // one line per 10 s while the store is away, not one per waiter
      warnedAtMs = now;
      logger.warn('long poll could not read payment status', { error: err });
    },
  });
}
