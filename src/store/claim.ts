import type { Collection, Filter, OptionalUnlessRequiredId } from 'mongodb';
import { isDuplicateKey } from './mongo.js';

/**
 * One insert-first claim: ours when the insert lands, else the document another writer stored
 * first under the same _id (null when it was deleted before we could read it). A plain insert,
 * not an upsert: the unique _id decides between concurrent first writers on every store, and
 * FerretDB v1 drops empty arrays from an upsert's $setOnInsert document.
 */
export type ClaimAttempt<T> = { won: true; doc: T } | { won: false; held: T | null };

export async function tryClaim<T extends { _id: string }>(col: Collection<T>, doc: T): Promise<ClaimAttempt<T>> {
  try {
    await col.insertOne(doc as OptionalUnlessRequiredId<T>);
    return { won: true, doc };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  return { won: false, held: (await col.findOne({ _id: doc._id } as Filter<T>)) as T | null };
}

/** What the caller makes of a claim someone else holds: its answer (replay, conflict, join), or try again (the caller cleared it away). */
export type HeldVerdict<R> = { answer: R } | 'retry';

export interface ClaimSteps<T, R> {
  /** How many insert attempts before `unsettled`. */
  attempts: number;
  /** The claim document, built afresh for each attempt. */
  doc: () => T;
  /** The insert landed: the claim is ours. */
  won: (doc: T) => R | Promise<R>;
  /** Another writer's claim stands: the caller judges it. */
  held: (held: T, mine: T) => HeldVerdict<R> | Promise<HeldVerdict<R>>;
  /** The error when no attempt settled (claims kept vanishing or being cleared). */
  unsettled: () => Error;
}

/**
 * The one claim loop: insert the claim; on a duplicate read the stored one and let the caller
 * decide. A claim that vanished between the insert and the read is tried again.
 */
export async function claimInsertFirst<T extends { _id: string }, R>(col: Collection<T>, steps: ClaimSteps<T, R>): Promise<R> {
  for (let attempt = 0; attempt < steps.attempts; attempt++) {
    const mine = steps.doc();
    const claim = await tryClaim(col, mine);
    if (claim.won) return steps.won(mine);
    if (!claim.held) continue;
    const verdict = await steps.held(claim.held, mine);
    if (verdict !== 'retry') return verdict.answer;
  }
  throw steps.unsettled();
}

/** Inserts `doc` unless a document with its _id exists, then returns the stored one. */
export async function insertOnce<T extends { _id: string }>(col: Collection<T>, doc: T): Promise<T> {
  const claim = await tryClaim(col, doc);
  if (claim.won) return claim.doc;
  if (!claim.held) throw new Error(`insertOnce: ${col.collectionName} ${doc._id} is missing after its write`);
  return claim.held;
}
