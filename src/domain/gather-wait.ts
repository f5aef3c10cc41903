/** What the shard saw at one look at its queues. */
export interface GatherView {
  nowMs: number;
  /** Accepted payments waiting, and when the oldest of them was queued (undefined when none). */
  ready: number;
  oldestAtMs: number | undefined;
  /** When the shard started watching its queues (the arrival rate is measured from here at most). */
  watchingSinceMs: number;
}

export interface GatherPace {
  maxPayments: number;
  /** Ready payments at which a batch is due at once (BATCH_MIN_PAYMENTS; maxPayments when absent or larger). */
  minPayments?: number;
  maxWaitMs: number;
  /** The shortest look-again interval (SETTLEMENT_POLL_MS). */
  pollMs: number;
}

/** The longest a shard waits between looks, so an idle shard notices its first payment well within the batch window. */
const MAX_LOOK_MS = 1_000;

/**
 * How long a shard may wait before it looks at its queues again without closing a batch late: a
 * batch is due when its oldest payment has waited maxWaitMs (a deadline known from the oldest's
 * queue time, whenever the shard sees it) or when maxPayments are ready, which at the rate seen so
 * far comes no sooner than the estimate below. Each look is a store read (and a fate read for the
 * new entries), so looking every pollMs whatever the queue holds cost more per second than the
 * payments it settled; looking when something can be due costs a few reads per batch.
 */
export function gatherWaitMs(v: GatherView, p: GatherPace): number {
  const dueAt = dueCount(p);
  // A shard that sends its first ready payment at once looks every pollMs: each look may be due.
  const idle = dueAt <= 1 ? p.pollMs : Math.min(MAX_LOOK_MS, Math.max(p.pollMs, Math.floor(p.maxWaitMs / 4)));
  if (v.oldestAtMs === undefined || v.ready === 0) return idle;
  const untilDue = v.oldestAtMs + p.maxWaitMs - v.nowMs;
  const observedMs = Math.max(1, v.nowMs - Math.max(v.oldestAtMs, v.watchingSinceMs));
  const perMs = v.ready / observedMs;
  // Half the time the rate seen so far needs to fill the batch: a rate that doubles is still met in time.
  const untilFull = perMs > 0 ? ((dueAt - v.ready) / perMs) * 0.5 : Infinity;
  return Math.max(p.pollMs, Math.min(idle, untilDue, untilFull));
}

/** How many ready payments make a batch due at once: the minimum batch, never above the batch size. */
export function dueCount(p: Pick<GatherPace, 'maxPayments' | 'minPayments'>): number {
  return Math.max(1, Math.min(p.minPayments ?? p.maxPayments, p.maxPayments));
}

export interface BatchSizes extends Pick<GatherPace, 'maxPayments' | 'minPayments' | 'maxWaitMs'> {
  /** The most one batch takes (BATCH_MAX_PAYMENTS_UNDER_BACKLOG; maxPayments when smaller). */
  maxPaymentsUnderBacklog: number;
}

/**
 * How many of the ready payments (oldest first) a batch claims at this look: none until the minimum
 * batch (dueCount: BATCH_MIN_PAYMENTS, 1 by default, so a free shard sends at once: group commit)
 * is ready or the oldest has waited maxWaitMs, then every ready one up to the largest batch. A
 * shard's round (submit, confirm, batch end) takes seconds, and whatever arrives meanwhile is ready
 * at its next look: taking it all lets batches grow with the arrival rate. Taking only maxPayments
 * until twice that waited left a loaded shard settling maxPayments per round while the rest queued.
 */
export function batchClaimSize(ready: number, oldestWaitedMs: number | undefined, s: BatchSizes): number {
  if (ready === 0 || oldestWaitedMs === undefined) return 0;
  if (ready < dueCount(s) && oldestWaitedMs < s.maxWaitMs) return 0;
  return Math.min(ready, Math.max(s.maxPayments, s.maxPaymentsUnderBacklog));
}
