/**
 * A token bucket kept as claimed time slots. Slot k is the interval [k*I, (k+1)*I) with
 * I = 60 s / perMinute. At `now` a bucket may hand out any free slot among the `burst` slots that
 * start with the current one; an admitted request claims one. So at most `burst` requests pass at
 * once and one more per interval after that, whichever slots were picked. Claiming the lowest free
 * slot behaves exactly like GCRA; a claim is one unique insert, which stays atomic on every store
 * (FerretDB v1 runs a compare-and-set as a read then a write, so it is not). A busy process claims
 * several slots with one command: see rate-limit-blocks.ts.
 *
 * No one reads which slots are taken (on FerretDB v1 that range read scans every bucket's slots):
 * a claimer tries slot ids one by one from the lowest it does not know to be taken, and each
 * refused insert tells it one more taken slot.
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

/**
 * What one process knows of a bucket: every slot below `next` is taken or being claimed by one of
 * its requests. Only a starting point; the unique insert decides.
 */
export interface SlotHint {
  next: number;
}

/** Failed claims in a row tried slot by slot; after that the step doubles (see nextProbe). */
export const SEQUENTIAL_PROBES = 64;

export function slotWindow(nowMs: number, policy: RatePolicy): SlotWindow {
  const intervalMs = 60_000 / policy.perMinute;
  const first = Math.floor(nowMs / intervalMs);
  return { first, last: first + policy.burst - 1, intervalMs };
}

/** The first slot to try: the lowest of the window not known taken; null when none is left. */
export function firstProbe(window: SlotWindow, hint: SlotHint): number | null {
  const slot = Math.max(window.first, hint.next);
  return slot <= window.last ? slot : null;
}

/**
 * The slot to try after `taken` was refused, the `failures`-th refusal in a row. One by one (so
 * the lowest free slot is found and a refusal means the window is full) up to SEQUENTIAL_PROBES;
 * beyond that, a claimer far behind a huge bucket's front doubles its step so it catches up in
 * a few probes, and tries the window's last slot before refusing.
 */
export function nextProbe(window: SlotWindow, taken: number, failures: number, hint: SlotHint): number | null {
  const step = failures <= SEQUENTIAL_PROBES ? 1 : 2 ** Math.min(failures - SEQUENTIAL_PROBES, 40);
  const next = Math.max(taken + step, hint.next);
  if (next <= window.last) return next;
  return taken < window.last && step > 1 ? window.last : null;
}

/**
 * Claims a free slot of `window` with `tryClaim` (true when the insert succeeded). Concurrent
 * claimers of one process sharing `hint` start on distinct slots instead of colliding.
 */
export async function claimSlot(window: SlotWindow, hint: SlotHint, tryClaim: (slot: number) => Promise<boolean>): Promise<number | null> {
  let failures = 0;
  for (let slot = firstProbe(window, hint); slot !== null; slot = nextProbe(window, slot, ++failures, hint)) {
    hint.next = Math.max(hint.next, slot + 1);
    if (await tryClaim(slot)) return slot;
  }
  return null;
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** Admitted on `slot`: claims go lowest first, so the slots from the window's first up to it are taken. */
export function admittedOn(window: SlotWindow, slot: number, nowMs: number, policy: RatePolicy): RateDecision {
  return {
    allowed: true,
    limit: policy.burst,
    remaining: Math.max(0, window.last - slot),
    resetSeconds: seconds((slot + 1) * window.intervalMs - nowMs),
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
