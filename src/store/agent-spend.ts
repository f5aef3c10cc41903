import type { Collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

export type SpendCharge = 'charged' | 'over_limit';

/**
 * Adds `amount` to an agent key's spend for one day if it stays within `dailyLimit`. Keyed by the
 * spend intent, so a retry charges once; a concurrent first charge of the day races on the
 * upsert's _id and simply tries again.
 */
export async function chargeDailySpend(
  c: Collections,
  o: { dayId: string; agentKeyId: string; intentId: string; amount: number; dailyLimit: number },
): Promise<SpendCharge> {
  const field = `charges.${o.intentId}`;
  for (let attempt = 0; attempt < 5; attempt++) {
    const day = await c.agentSpendDays.findOne({ _id: o.dayId });
    if (day?.charges?.[o.intentId] !== undefined) return 'charged';
    if ((day?.spent ?? 0) + o.amount > o.dailyLimit) return 'over_limit';
    try {
      const r = await c.agentSpendDays.updateOne(
        { _id: o.dayId, spent: { $lte: o.dailyLimit - o.amount }, [field]: { $exists: false } },
        { $inc: { spent: o.amount }, $set: { agentKeyId: o.agentKeyId, [field]: o.amount } },
        { upsert: day === null },
      );
      if (r.modifiedCount === 1 || r.upsertedCount === 1) return 'charged';
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
  throw new Error('daily spend charge did not settle');
}

/** Gives one intent's charge back (refused or expired unused). Idempotent. */
export async function refundDailySpend(c: Collections, dayId: string, intentId: string): Promise<void> {
  const field = `charges.${intentId}`;
  const day = await c.agentSpendDays.findOne({ _id: dayId });
  const amount = day?.charges?.[intentId];
  if (amount === undefined) return;
  await c.agentSpendDays.updateOne({ _id: dayId, [field]: amount }, { $inc: { spent: -amount }, $unset: { [field]: '' } });
}

export async function spentOn(c: Collections, dayId: string): Promise<number> {
  return (await c.agentSpendDays.findOne({ _id: dayId }))?.spent ?? 0;
}
