import { claimSlot, refused, slotWindow, type RateDecision, type RatePolicy, type SlotWindow } from './rate-limit.js';

/**
 * Slots claimed in blocks (see rate-limit.ts for the slots themselves). A process busy on a bucket
 * claims up to k slots with one insert command (one document per slot, so a block collides slot by
 * slot with every other claim, old or new) and hands them to its next requests without a store
 * command. k follows the process's own pace on the bucket: 1 when idle, at the first request, or
 * when its requests come faster than the rate (then the bucket drains and claims go one by one, as
 * rate-limit.ts describes); otherwise as many as it expects within BLOCK_SPAN_MS, never above
 * MAX_BLOCK nor a quarter of the burst. The block's slots sit together where the last of those
 * requests is due: any of them serves whichever request comes first, and none passes before the
 * block's requests came, however bursty their arrivals (merchants' are; slots spread at the mean
 * pace were mostly found passed by a late request, or meant for later than an early one). A pause
 * longer than BLOCK_SPAN_MS ends the pace: the first request after it claims one slot.
 *
 * Every admitted request holds a distinct slot of its own window, so the total admitted by all
 * processes never exceeds burst + one per interval. What a block costs others: slots a process
 * reserved and does not use count as taken until they pass. That is at most k - 1 slots per
 * busy process and bucket (fewer than MAX_BLOCK, a quarter of the burst, and what the rate refills
 * in BLOCK_SPAN_MS), each at most BLOCK_SPAN_MS plus one interval ahead of its claim unless it had
 * to skip slots known taken (never past the window). It only matters when the processes together
 * exceed the rate while each alone stays below it: then a 429 may come that many slots early. A
 * slot used before its time also stays taken until it passes, so a bucket shared with such a
 * process refills at most BLOCK_SPAN_MS later than it would have.
 */

export const MAX_BLOCK = 20;
export const BLOCK_SPAN_MS = 10_000;
/** Blocks tried before claiming slot by slot from the front. */
export const BLOCK_TRIES = 2;
const GAP_WEIGHT = 0.2;

/** What one process knows of a bucket; only a starting point, the unique inserts decide. */
export interface BucketState {
  /** Every slot below is taken or being claimed by this process (the front, as SlotHint). */
  next: number;
  /** Slots at or above `next` known taken or being claimed by this process (blocks, refused block slots). */
  known: Set<number>;
  /** Slots this process claimed and has not handed out yet, ascending. */
  held: number[];
  lastArrivalMs?: number;
  /** Smoothed time between this process's requests on the bucket. */
  gapMs?: number;
  /** The latest claim under way with slots to spare for requests arriving meanwhile. */
  pending?: { spare: number; done: Promise<void> };
}

/** Claims the given slots with one command; true for each slot this process now holds. */
export type ClaimSlots = (slots: number[]) => Promise<boolean[]>;

export const newBucketState = (): BucketState => ({ next: 0, known: new Set(), held: [] });

/** Records a request's arrival; returns this process's pace on the bucket (undefined: none yet). */
export function noteArrival(s: BucketState, nowMs: number): number | undefined {
  const sinceLast = s.lastArrivalMs === undefined ? undefined : Math.max(0, nowMs - s.lastArrivalMs);
  s.lastArrivalMs = Math.max(s.lastArrivalMs ?? nowMs, nowMs);
  if (sinceLast === undefined || sinceLast > BLOCK_SPAN_MS) {
    // A pause is not part of the pace (averaged in, it kept blocks small long after): start again.
    s.gapMs = undefined;
    return undefined;
  }
  s.gapMs = s.gapMs === undefined ? sinceLast : (1 - GAP_WEIGHT) * s.gapMs + GAP_WEIGHT * sinceLast;
  return s.gapMs;
}

/**
 * Slots one claim takes for a process whose requests come `gapMs` apart (undefined: no pace yet).
 * Only a process slower than the rate claims ahead: one at the rate or faster drains the bucket,
 * and near a full window a slot it held unused would refuse another process's request early.
 */
export function blockSize(policy: RatePolicy, gapMs: number | undefined): number {
  if (gapMs === undefined || gapMs < 60_000 / policy.perMinute) return 1;
  const byPace = Math.floor(BLOCK_SPAN_MS / Math.max(gapMs, 1));
  return Math.max(1, Math.min(MAX_BLOCK, Math.floor(policy.burst / 4), byPace));
}

/**
 * Up to k slots for the next k requests due `gapMs` apart: consecutive slots not known to be taken,
 * the last of them about where the k-th request is due (at most BLOCK_SPAN_MS ahead), none past
 * the window.
 */
export function blockCandidates(window: SlotWindow, s: BucketState, nowMs: number, gapMs: number, k: number): number[] {
  const dueMs = nowMs + Math.min(BLOCK_SPAN_MS, k * gapMs);
  const out: number[] = [];
  const dueSlot = Math.min(window.last, Math.floor(dueMs / window.intervalMs));
  let slot = Math.max(s.next, window.first, dueSlot - (k - 1));
  while (out.length < k) {
    while (slot <= window.last && s.known.has(slot)) slot++;
    if (slot > window.last) break;
    out.push(slot++);
  }
  return out;
}

/** The lowest held slot valid now (passed ones are dropped), or null. */
export function takeHeld(s: BucketState, window: SlotWindow): number | null {
  while (s.held.length > 0 && s.held[0]! < window.first) s.held.shift();
  return s.held.length > 0 && s.held[0]! <= window.last ? s.held.shift()! : null;
}

/** Keeps `known` small: slots that passed are forgotten, and a run of known slots at the front joins the prefix. */
function compact(s: BucketState, window: SlotWindow): void {
  s.next = Math.max(s.next, window.first);
  for (const slot of s.known) if (slot < s.next) s.known.delete(slot);
  while (s.known.delete(s.next)) s.next += 1;
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * Admitted on `slot`. Remaining is what this process could still admit were nobody else to claim:
 * the window's slots it does not know to be taken, plus those it holds. Reset is when the highest
 * slot it knows taken passes. From one process alone, both are exact.
 */
export function admittedWith(s: BucketState, window: SlotWindow, slot: number, nowMs: number, policy: RatePolicy): RateDecision {
  const low = Math.max(window.first, s.next);
  let taken = Math.max(0, Math.min(s.next, window.last + 1) - window.first);
  let top = Math.max(slot, Math.min(s.next, window.last + 1) - 1);
  for (const k of s.known) {
    if (k < low || k > window.last) continue;
    taken += 1;
    top = Math.max(top, k);
  }
  const held = s.held.filter((h) => h >= window.first && h <= window.last).length;
  return {
    allowed: true,
    limit: policy.burst,
    remaining: Math.max(0, policy.burst - taken + held),
    resetSeconds: seconds((top + 1) * window.intervalMs - nowMs),
    retryAfterSeconds: 0,
  };
}

/** Tries a block (twice at most); the first slot won is this request's, the rest are held. */
async function claimBlock(s: BucketState, window: SlotWindow, nowMs: number, gapMs: number, k: number, claim: ClaimSlots): Promise<number | null> {
  let release!: () => void;
  const pending = { spare: k - 1, done: new Promise<void>((r) => (release = r)) };
  s.pending = pending;
  try {
    for (let tries = 0; tries < BLOCK_TRIES; tries++) {
      const slots = blockCandidates(window, s, nowMs, gapMs, k);
      if (slots.length === 0) return null;
      for (const slot of slots) s.known.add(slot);
      const won = await claim(slots);
      const mine = slots.filter((_, i) => won[i]);
      if (mine.length > 0) {
        s.held.push(...mine.slice(1));
        s.held.sort((a, b) => a - b);
        return mine[0]!;
      }
    }
    return null;
  } finally {
    if (s.pending === pending) s.pending = undefined;
    release();
  }
}

/**
 * Applies one request at `nowMs` to a bucket shared through `claim`: a held slot if this process
 * has one, else a share of a block being claimed, else a claim of its own (a block, then slot by
 * slot from the front as rate-limit.ts describes). A 429 means every slot of the window is
 * known taken, by someone or by a request of this process.
 */
export async function acquireSlot(s: BucketState, nowMs: number, policy: RatePolicy, claim: ClaimSlots): Promise<RateDecision> {
  const window = slotWindow(nowMs, policy);
  const gapMs = noteArrival(s, nowMs);
  const k = blockSize(policy, gapMs);
  for (;;) {
    const held = takeHeld(s, window);
    if (held !== null) return admittedWith(s, window, held, nowMs, policy);
    if (!s.pending || s.pending.spare <= 0) break;
    s.pending.spare -= 1;
    await s.pending.done;
  }
  compact(s, window);
  let slot = k > 1 && gapMs !== undefined ? await claimBlock(s, window, nowMs, gapMs, k, claim) : null;
  if (slot === null) slot = await claimSlot(window, s, async (probe) => !s.known.has(probe) && (await claim([probe]))[0] === true);
  return slot === null ? refused(window, nowMs, policy) : admittedWith(s, window, slot, nowMs, policy);
}
