/**
 * A token bucket kept as claimed time slots. Slot k is the interval [k*I, (k+1)*I) with
 * I = 60 s / perMinute. At `now` a bucket may hand out any free slot among the `burst` slots that
 * start with the current one; an admitted request claims one. So at most `burst` requests pass at
 * once and one more per interval after that, whichever slots were picked. Claiming the lowest free
 * slot behaves exactly like GCRA; a claim is one unique insert, which stays atomic on every store
 * (FerretDB v1 runs a conditional update as a read then a write, so compare-and-set is not).
 */
export interface RatePolicy {
  perMinute: number;
  burst: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds to wait before retrying; 0 when allowed. */
  retryAfterSeconds: number;
}

export interface SlotWindow {
  first: number;
  last: number;
  intervalMs: number;
}

export function slotWindow(nowMs: number, policy: RatePolicy): SlotWindow {
  const intervalMs = 60_000 / policy.perMinute;
  const first = Math.floor(nowMs / intervalMs);
  return { first, last: first + policy.burst - 1, intervalMs };
}

/**
 * A free slot of the window: the lowest when `spread` is 1, else a random one of the lowest
 * `spread` free slots (so concurrent claimers rarely collide). Null when every slot is taken.
 */
export function pickSlot(window: SlotWindow, taken: ReadonlySet<number>, spread: number, random: () => number = Math.random): number | null {
  const free: number[] = [];
  for (let k = window.first; k <= window.last && free.length < spread; k++) {
    if (!taken.has(k)) free.push(k);
  }
  if (free.length === 0) return null;
  return free[Math.min(free.length - 1, Math.floor(random() * free.length))] ?? null;
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** `taken` holds the window's claimed slots, the caller's own included. */
export function admitted(window: SlotWindow, taken: ReadonlySet<number>, nowMs: number, policy: RatePolicy): RateDecision {
  let inWindow = 0;
  let highest = window.first - 1;
  for (const k of taken) {
    if (k < window.first || k > window.last) continue;
    inWindow += 1;
    highest = Math.max(highest, k);
  }
  return {
    allowed: true,
    limit: policy.burst,
    remaining: Math.max(0, policy.burst - inWindow),
    resetSeconds: seconds((highest + 1) * window.intervalMs - nowMs),
    retryAfterSeconds: 0,
  };
}

/** Every slot of the window is taken: the next one frees when the current slot ends. */
export function refused(window: SlotWindow, nowMs: number, policy: RatePolicy): RateDecision {
  return {
    allowed: false,
    limit: policy.burst,
    remaining: 0,
    resetSeconds: seconds((window.last + 1) * window.intervalMs - nowMs),
    retryAfterSeconds: Math.max(1, seconds((window.first + 1) * window.intervalMs - nowMs)),
  };
}
