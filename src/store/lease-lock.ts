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
const WAIT_MS = 8_000;
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

/** Runs `work` while holding the lock `key`; the lock is released however `work` ends. */
export async function withLease<T>(c: Collections, key: string, work: () => Promise<T>, opts: LeaseOptions = {}): Promise<T> {
  const owner = randomUUID();
  await acquire(c, key, owner, opts.leaseMs ?? LEASE_MS, opts.waitMs ?? WAIT_MS);
  try {
    return await work();
  } finally {
    // A failed release only delays the next holder until the lease expires.
    await c.locks.deleteOne({ _id: key, owner }).catch(() => undefined);
  }
}

async function acquire(c: Collections, key: string, owner: string, leaseMs: number, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  let backoff = FIRST_BACKOFF_MS;
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
      await takeOverExpired(c, key, held.owner);
      continue;
    }
    if (Date.now() >= deadline) throw new LeaseBusy(key);
    await sleep(backoff * (0.5 + Math.random()));
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  }
}

/**
 * Removes an expired lease. Of all the waiters that saw it expired, only the one that inserts the
 * takeover marker (unique per dead owner) deletes it, so no waiter deletes a lease a faster
 * waiter has taken meanwhile. Markers stay: there is one per holder that died holding a lock.
 */
async function takeOverExpired(c: Collections, key: string, deadOwner: string): Promise<void> {
  try {
    await c.locks.insertOne({ _id: `${key}#expired:${deadOwner}`, owner: deadOwner, expiresAt: new Date() });
  } catch (err) {
    if (isDuplicateKey(err)) return;
    throw err;
  }
  await c.locks.deleteOne({ _id: key, owner: deadOwner });
}
