import { Context } from '@temporalio/activity';

/** Often enough for a 10 s heartbeat timeout; the SDK throttles what it sends to the server. */
const EVERY_MS = 2_000;

/**
 * Runs an activity's body while heartbeating on a timer, so its heartbeat timeout measures whether
 * the worker is alive, not how long the body takes: a batch's submit may wait out an RPC outage,
 * but if its worker dies, Temporal retries it elsewhere after the heartbeat timeout instead of the
 * whole start-to-close timeout.
 */
export async function heartbeatWhileRunning<T>(body: () => Promise<T>, everyMs: number = EVERY_MS): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), everyMs);
  try {
    return await body();
  } finally {
    clearInterval(timer);
  }
}
