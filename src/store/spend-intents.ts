import type { Collections } from './collections.js';
import type { SpendIntentDoc, SpendIntentFateDoc } from './documents.js';
import { tryClaim } from './claim.js';
import { findByIds } from './find-by-ids.js';
import { isDuplicateKey } from './mongo.js';

/** What the creator of a spend intent decides; the store sets the rest (a RESERVED intent, addresses lower-cased). */
export type NewSpendIntent = Omit<SpendIntentDoc, '_id' | 'status' | 'createdAt' | 'consumedByVoucherId' | 'paymentId'>;

/**
 * The one way a spend intent document comes to be: RESERVED, stored once under its id. A repeat
 * (a joined or retried creation of the same id) returns the stored intent with created false.
 */
export async function createSpendIntentDoc(c: Collections, id: string, intent: NewSpendIntent, now: Date): Promise<{ doc: SpendIntentDoc; created: boolean }> {
  const doc: SpendIntentDoc = { _id: id, ...intent, payTo: intent.payTo.toLowerCase(), asset: intent.asset.toLowerCase(), status: 'RESERVED', createdAt: now };
  const claim = await tryClaim(c.spendIntents, doc);
  if (claim.won) return { doc, created: true };
  if (!claim.held) throw new Error(`spend intent ${id} is missing after its write`);
  return { doc: claim.held, created: false };
}

export function findSpendIntent(c: Collections, spendIntentId: string): Promise<SpendIntentDoc | null> {
  return c.spendIntents.findOne({ _id: spendIntentId });
}

export function findSpendIntentFate(c: Collections, spendIntentId: string): Promise<SpendIntentFateDoc | null> {
  return c.spendIntentFates.findOne({ _id: spendIntentId });
}

/** The decided fates of many spend intents, one command per IDS_PER_READ; an undecided intent has none. */
export async function findSpendIntentFates(c: Collections, spendIntentIds: readonly string[]): Promise<Map<string, SpendIntentFateDoc>> {
  return new Map((await findByIds(c.spendIntentFates, spendIntentIds)).map((f) => [f._id, f]));
}

/** The intent with its decided fate applied: the fate document is the truth, the intent's status a copy. */
export async function findSpendIntentWithFate(c: Collections, spendIntentId: string): Promise<SpendIntentDoc | null> {
  const [doc, fate] = await Promise.all([findSpendIntent(c, spendIntentId), findSpendIntentFate(c, spendIntentId)]);
  return doc && withFate(doc, fate);
}

/** The intent as its fate (when decided) makes it. Pure. */
export function withFate(doc: SpendIntentDoc, fate: SpendIntentFateDoc | null): SpendIntentDoc {
  if (!fate) return doc;
  return fate.fate === 'CONSUMED'
    ? { ...doc, status: 'CONSUMED', ...(fate.voucherId ? { consumedByVoucherId: fate.voucherId } : {}), ...(fate.paymentId ? { paymentId: fate.paymentId } : {}) }
    : { ...doc, status: 'EXPIRED' };
}

/** Inserts the fate, or returns the one decided first. */
async function decideFate(c: Collections, fate: SpendIntentFateDoc): Promise<SpendIntentFateDoc> {
  try {
    await c.spendIntentFates.insertOne(fate);
    return fate;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const first = await findSpendIntentFate(c, fate._id);
  if (!first) throw new Error(`spend intent ${fate._id} has a fate that cannot be read back`);
  return first;
}

export type ConsumeResult = 'consumed' | 'not_available';

/**
 * Uses the intent for one payment. Idempotent for that payment (a resumed capture, the sweeper);
 * another payment, another voucher, or an expiry that came first, loses.
 */
export async function consumeSpendIntent(c: Collections, spendIntentId: string, voucherId: string, paymentId: string): Promise<ConsumeResult> {
  return (await consumeSpendIntentOrFate(c, spendIntentId, voucherId, paymentId)) === 'consumed' ? 'consumed' : 'not_available';
}

/** As consumeSpendIntent; a loser gets the fate that was decided first (read anyway by the losing insert), to tell why. */
export async function consumeSpendIntentOrFate(c: Collections, spendIntentId: string, voucherId: string, paymentId: string): Promise<'consumed' | SpendIntentFateDoc> {
  const decided = await decideFate(c, { _id: spendIntentId, fate: 'CONSUMED', voucherId, paymentId, at: new Date() });
  // The intent document's status is a copy, brought up to date when the intent's workflow closes
  // (expireSpendIntentOnce); readers that decide anything use findSpendIntentWithFate, or consume.
  return decided.fate === 'CONSUMED' && decided.voucherId === voucherId && decided.paymentId === paymentId ? 'consumed' : decided;
}

/**
 * At the end of the intent's life: expires it unless a capture consumed it first, and copies the
 * fate onto the intent document. True when it is (now) expired.
 */
export async function expireSpendIntentOnce(c: Collections, spendIntentId: string): Promise<boolean> {
  const decided = await decideFate(c, { _id: spendIntentId, fate: 'EXPIRED', at: new Date() });
  const copy =
    decided.fate === 'EXPIRED'
      ? { status: 'EXPIRED' as const }
      : { status: 'CONSUMED' as const, ...(decided.voucherId ? { consumedByVoucherId: decided.voucherId } : {}), ...(decided.paymentId ? { paymentId: decided.paymentId } : {}) };
  await c.spendIntents.updateOne({ _id: spendIntentId }, { $set: copy });
  return decided.fate === 'EXPIRED';
}
