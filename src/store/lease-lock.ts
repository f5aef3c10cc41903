import { randomUUID } from 'node:crypto';
import type { Collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

/**
 * A lock shared by every process through the store, for read-modify-write of one document.
 * FerretDB v1 runs a conditional update as a read then a whole-document write, so two updates of
 * one document can both pass their guard and the later one erases the earlier; only a unique
 * insert and a delete are atomic. So the lock is a document: taking it is inserting `_id: key`,
 * releasing it is deleting it. A lease whose holder died is taken over once it expires.
 */
export interface LeaseOptions {
  /** How long a holder may keep the lock before others may take it over. */
  leaseMs?: number;
  /** How long to wait for a busy lock before giving up with LeaseBusy. */
  waitMs?: number;
}

const LEASE_MS = 15_000;
/** How long a busy document is waited for before LeaseBusy, by a lease or a versioned write (borrower-changes.ts). */
export const BUSY_WAIT_MS = 8_000;
const FIRST_BACKOFF_MS = 2;
const MAX_BACKOFF_MS = 40;

/** The lock stayed busy for the whole wait: a retryable condition (answer "unavailable, retry"). */
export class LeaseBusy extends Error {
  override readonly name = 'LeaseBusy';
  constructor(readonly key: string) {
    super(`${key} is busy; retry shortly`);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A waiter for retrying a busy document: each call sleeps a jittered backoff, doubling from 2 ms up to 40 ms. */
export function busyBackoff(): () => Promise<void> {
  let backoff = FIRST_BACKOFF_MS;
  return async () => {
    await sleep(backoff * (0.5 + Math.random()));
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  };
}

/** Runs `work` while holding the lock `key`; the lock is released however `work` ends. Not reentrant. */
export async function withLease<T>(c: Collections, key: string, work: () => Promise<T>, opts: LeaseOptions = {}): Promise<T> {
  const leaseMs = opts.leaseMs ?? LEASE_MS;
  const deadline = Date.now() + (opts.waitMs ?? BUSY_WAIT_MS);
  return inTurn(key, deadline, async () => {
    const owner = randomUUID();
    await acquire(c, key, owner, leaseMs, deadline);
    try {
      return await work();
    } finally {
      // A failed release only delays the next holder until the lease expires. The owner in the
      // filter is the one non-_id filter on a hot path: this collection holds only live leases.
      await c.locks.deleteOne({ _id: key, owner }).catch(() => undefined);
    }
  });
}

/**
 * Waiters of one process queue here per key, so only the first of them polls the store and the
 * next one starts the moment the lease is released instead of after a backoff sleep. Also used
 * alone by writers that need no lease (borrower-changes.ts): one in-process writer per key at a time.
 */
const turns = new Map<string, Promise<void>>();

export async function inTurn<T>(key: string, deadline: number, work: () => Promise<T>): Promise<T> {
  const before = turns.get(key) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((r) => (done = r));
  const tail = before.then(() => mine);
  turns.set(key, tail);
  try {
    await waitFor(before, deadline, key);
    return await work();
  } finally {
    done();
    if (turns.get(key) === tail) turns.delete(key);
  }
}

async function waitFor(turn: Promise<void>, deadline: number, key: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LeaseBusy(key)), Math.max(0, deadline - Date.now()));
  });
  try {
    await Promise.race([turn, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function acquire(c: Collections, key: string, owner: string, leaseMs: number, deadline: number): Promise<void> {
  const wait = busyBackoff();
  for (;;) {
    const now = Date.now();
    try {
      await c.locks.insertOne({ _id: key, owner, expiresAt: new Date(now + leaseMs) });
      return;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const held = await c.locks.findOne({ _id: key });
    if (held && held.expiresAt.getTime() <= now) {
      await takeOverExpired(c, key, held.owner, leaseMs);
      continue;
    }
    if (Date.now() >= deadline) throw new LeaseBusy(key);
    await wait();
  }
}

/**
 * Removes an expired lease. The delete matches the dead owner, which is atomic on MongoDB; on
 * FerretDB v1 it is a read then a delete by _id, so two waiters deleting at once could remove a
 * lease a third one took meanwhile. Hence taking over is itself locked, per dead owner: one waiter
 * deletes, the others go back to waiting. (A taker that dies is taken over the same way.)
 */
async function takeOverExpired(c: Collections, key: string, deadOwner: string, leaseMs: number): Promise<void> {
  const takeover = `${key}~takeover:${deadOwner}`;
  const taker = randomUUID();
  try {
    await acquire(c, takeover, taker, leaseMs, Date.now());
  } catch (err) {
    if (err instanceof LeaseBusy) return;
    throw err;
  }
  try {
    await c.locks.deleteOne({ _id: key, owner: deadOwner });
  } finally {
    await c.locks.deleteOne({ _id: takeover, owner: taker }).catch(() => undefined);
  }
}
