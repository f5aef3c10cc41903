import type { Collections } from './collections.js';
import type { AgentSpendDayDoc } from './documents.js';
import { withFencedDocument, type FencedWrites } from './fencing.js';

export type SpendCharge = 'charged' | 'over_limit';

/**
 * Read-modify-write of one agent key's day, under that day's lease lock (see lease-lock.ts); the
 * write is fenced (fencing.ts), so a holder that outlived its lease writes nothing.
 */
function changeSpendDay<R>(c: Collections, dayId: string, work: (day: AgentSpendDayDoc | null, write: FencedWrites<AgentSpendDayDoc>) => Promise<R>): Promise<R> {
  return withFencedDocument(c, c.agentSpendDays, dayId, `spend-day:${dayId}`, work);
}

/**
 * Adds `amount` to an agent key's spend for one day if it stays within `dailyLimit`. Keyed by the
 * spend intent, so a retry charges once.
 */
export function chargeDailySpend(
  c: Collections,
  o: { dayId: string; agentKeyId: string; intentId: string; amount: number; dailyLimit: number },
): Promise<SpendCharge> {
  return changeSpendDay(c, o.dayId, async (day, write) => {
    if (day?.charges?.[o.intentId] !== undefined) return 'charged';
    const spent = (day?.spent ?? 0) + o.amount;
    if (spent > o.dailyLimit) return 'over_limit';
    const charges = { ...(day?.charges ?? {}), [o.intentId]: o.amount };
    if (day) await write.update({ $set: { spent, charges } });
    else await write.insert({ _id: o.dayId, agentKeyId: o.agentKeyId, spent, charges });
    return 'charged';
  });
}

/** Gives one intent's charge back (refused or expired unused). Idempotent. */
export function refundDailySpend(c: Collections, dayId: string, intentId: string): Promise<void> {
  return changeSpendDay(c, dayId, async (day, write) => {
    const amount = day?.charges?.[intentId];
    if (!day || amount === undefined) return;
    const { [intentId]: _refunded, ...charges } = day.charges ?? {};
    await write.update({ $set: { spent: day.spent - amount, charges } });
  });
}

export function findSpendDay(c: Collections, dayId: string): Promise<AgentSpendDayDoc | null> {
  return c.agentSpendDays.findOne({ _id: dayId });
}

export async function spentOn(c: Collections, dayId: string): Promise<number> {
  return (await findSpendDay(c, dayId))?.spent ?? 0;
}
