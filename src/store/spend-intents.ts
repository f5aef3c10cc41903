import type { Collections } from './collections.js';
import type { SpendIntentDoc } from './documents.js';

export async function insertSpendIntent(c: Collections, doc: SpendIntentDoc): Promise<void> {
  await c.spendIntents.insertOne(doc);
}

export function findSpendIntent(c: Collections, spendIntentId: string): Promise<SpendIntentDoc | null> {
  return c.spendIntents.findOne({ _id: spendIntentId });
}

export type ConsumeResult = 'consumed' | 'already_consumed_by_this_voucher' | 'not_available';

/** Marks the intent used by one voucher; the conditional update makes a second voucher lose. */
export async function consumeSpendIntent(
  c: Collections,
  spendIntentId: string,
  voucherId: string,
  paymentId: string,
): Promise<ConsumeResult> {
  const r = await c.spendIntents.updateOne(
    { _id: spendIntentId, status: 'RESERVED' },
    { $set: { status: 'CONSUMED', consumedByVoucherId: voucherId, paymentId } },
  );
  if (r.modifiedCount === 1) return 'consumed';
  const doc = await findSpendIntent(c, spendIntentId);
  return doc?.status === 'CONSUMED' && doc.consumedByVoucherId === voucherId ? 'already_consumed_by_this_voucher' : 'not_available';
}
