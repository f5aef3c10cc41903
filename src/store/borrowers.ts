import { changeBorrower, changeBorrowers, type BorrowerChange } from './borrower-changes.js';
import { borrowerFromStored, storedBorrower } from './borrower-record.js';
import { changeBorrowerStanding } from './borrower-standing.js';
import { insertOnce } from './claim.js';
import { isDuplicateKey } from './mongo.js';
import type { Collections } from './collections.js';
import type { BorrowerDoc } from './documents.js';

export async function insertBorrower(c: Collections, doc: BorrowerDoc): Promise<void> {
  await c.borrowers.insertOne(storedBorrower(doc));
}

export async function findBorrower(c: Collections, borrowerId: string): Promise<BorrowerDoc | null> {
  const stored = await c.borrowers.findOne({ _id: borrowerId });
  return stored && borrowerFromStored(stored);
}

export { listAgentKeys } from './operational-agents.js';

export type HoldResult = 'held' | 'already_held' | 'insufficient_credit' | 'borrower_not_active';

/**
 * Holds credit for one spend intent. The hold's key in `holds` makes it idempotent: a retried
 * call finds it and does not take the credit twice.
 */
export function holdCredit(c: Collections, borrowerId: string, holdId: string, amount: number): Promise<HoldResult> {
  return changeBorrower<HoldResult>(c, borrowerId, (b) => {
    if (!b || b.status !== 'ACTIVE' || b.suspended) return { result: 'borrower_not_active' };
    if (b.holds[holdId] !== undefined) return { result: 'already_held' };
    if (b.available < amount) return { result: 'insufficient_credit' };
    return { result: 'held', change: { available: b.available - amount, holds: { ...b.holds, [holdId]: amount } } };
  });
}

/** Closes a hold: its credit goes back to `available`, or into booked `debt`. Idempotent. */
function closeHold(c: Collections, borrowerId: string, holdId: string, into: 'available' | 'debt'): Promise<boolean> {
  return changeBorrower(c, borrowerId, (b) => {
    const amount = b?.holds[holdId];
    if (!b || amount === undefined) return { result: false };
    const { [holdId]: _closed, ...holds } = b.holds;
    return { result: true, change: { holds, [into]: b[into] + amount } };
  });
}

/** Gives a hold's credit back (payment failed, intent expired). */
export function releaseHold(c: Collections, borrowerId: string, holdId: string): Promise<boolean> {
  return closeHold(c, borrowerId, holdId, 'available');
}

/** Turns a hold into booked debt once its payment is CONFIRMED on chain. */
export function convertHoldToDebt(c: Collections, borrowerId: string, holdId: string): Promise<boolean> {
  return closeHold(c, borrowerId, holdId, 'debt');
}

/** The borrower a wallet signed in as, if it ever did (the borrower page creates none). */
export async function findBorrowerByWallet(c: Collections, wallet: string): Promise<BorrowerDoc | null> {
  const entry = await c.wallets.findOne({ _id: wallet.toLowerCase() });
  return entry ? findBorrower(c, entry.borrowerId) : null;
}

/**
 * The borrower a wallet signs in as, created on first sign-in (stage SIGNED_IN, no credit yet).
 * The wallets collection's unique _id makes two concurrent first sign-ins end with one borrower.
 */
export async function findOrCreateBorrowerByWallet(c: Collections, wallet: string, newBorrowerId: string, now: Date): Promise<BorrowerDoc> {
  const address = wallet.toLowerCase();
  const existing = await c.wallets.findOne({ _id: address });
  if (existing) {
    const b = await findBorrower(c, existing.borrowerId);
    if (b) return b;
  }
  try {
    await c.wallets.insertOne({ _id: address, borrowerId: newBorrowerId, createdAt: now });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const owner = await c.wallets.findOne({ _id: address });
  if (!owner) throw new Error('wallet registry lost a write');
  const doc: BorrowerDoc = {
    _id: owner.borrowerId,
    status: 'ONBOARDING',
    stage: 'SIGNED_IN',
    walletAddress: address,
    creditLimit: 0,
    available: 0,
    holds: {},
    debt: 0,
    operationalAgentIds: [],
    createdAt: now,
    updatedAt: now,
  };
  // Idempotent: a crash between the two inserts is healed by the next sign-in.
  return borrowerFromStored(await insertOnce(c.borrowers, storedBorrower(doc)));
}

/**
 * What closing these holds changes on the borrower: each open one's credit goes into `debt`
 * (confirmed) or back to `available` (failed). Holds already closed are skipped, so closing them
 * again changes nothing (undefined when none is open).
 */
export function holdsClosing(b: BorrowerDoc, holdIds: readonly string[], into: 'available' | 'debt'): { closed: string[]; change: BorrowerChange } | undefined {
  const holds = { ...b.holds };
  const closed: string[] = [];
  let sum = 0;
  for (const id of holdIds) {
    const amount = holds[id];
    if (amount === undefined) continue;
    sum += amount;
    closed.push(id);
    delete holds[id];
  }
  if (closed.length === 0) return undefined;
  return { closed, change: { holds, [into]: b[into] + sum } };
}

/** Closes many holds of one borrower in one write (see holdsClosing). Returns the holds it closed. */
export function closeHolds(c: Collections, borrowerId: string, holdIds: readonly string[], into: 'available' | 'debt'): Promise<string[]> {
  return changeBorrower(c, borrowerId, (b) => {
    const closing = b ? holdsClosing(b, holdIds, into) : undefined;
    return closing ? { result: closing.closed, change: closing.change } : { result: [] };
  });
}

/**
 * Closes the holds of many borrowers at once (a settled batch): one read of them all and one
 * update command of fenced writes, whatever the number of borrowers and holds (changeBorrowers).
 * Idempotent: a retried batch end finds the holds closed and writes nothing.
 */
export function closeHoldsOfBorrowers(c: Collections, holdsByBorrower: ReadonlyMap<string, readonly string[]>, into: 'available' | 'debt'): Promise<void> {
  return changeBorrowers(c, [...holdsByBorrower.keys()], (b) => holdsClosing(b, holdsByBorrower.get(b._id) ?? [], into)?.change);
}

export type SuspensionChange = 'changed' | 'unchanged' | 'not_found';

/**
 * Suspends (with a reason) or reinstates (null) a borrower, under its lease like every borrower
 * write, and copies the new standing onto its agents before returning, so the very next capture
 * sees it (borrower-standing.ts). Running it again repeats the copy: it heals an interrupted run.
 */
export function setBorrowerSuspension(c: Collections, borrowerId: string, suspended: { at: Date; reason: string } | null): Promise<SuspensionChange> {
  return changeBorrowerStanding<SuspensionChange>(c, borrowerId, (b) => {
    if (!b) return { result: 'not_found' };
    if (!!b.suspended === !!suspended) return { result: 'unchanged' };
    return { result: 'changed', change: { suspended } };
  });
}
