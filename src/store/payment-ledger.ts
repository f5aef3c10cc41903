import type { AnyBulkWriteOperation } from 'mongodb';
import { ledgerIds, ledgerWrites, type LedgerLine } from '../domain/payment-ledger.js';
import type { Collections } from './collections.js';
import type { LedgerDoc } from './documents.js';
import { MAX_UPDATES_PER_COMMAND } from './payments.js';

/**
 * Adds payments' final lines to their merchants' ledgers. Every update is a set-add of values
 * that never change, so a retried batch end (or void) writes nothing twice. Pages first, the
 * day and merchant indexes that lead to them last: a reader never finds a minute with no page.
 */
export async function recordLedgerLines(c: Collections, lines: ReadonlyArray<LedgerLine & { merchantId: string }>): Promise<void> {
  if (lines.length === 0) return;
  const w = ledgerWrites(lines);
  const pages: AnyBulkWriteOperation<LedgerDoc>[] = [...w.pages].map(([_id, p]) => ({
    updateOne: { filter: { _id }, update: { $set: { merchantId: p.merchantId }, $addToSet: { lines: { $each: p.lines } } }, upsert: true },
  }));
  const orders: AnyBulkWriteOperation<LedgerDoc>[] = [...w.orders].map(([_id, o]) => ({
    updateOne: { filter: { _id }, update: { $set: { merchantId: o.merchantId }, $addToSet: { paymentIds: { $each: [...o.paymentIds] } } }, upsert: true },
  }));
  const days: AnyBulkWriteOperation<LedgerDoc>[] = [...w.days].map(([_id, d]) => ({
    updateOne: { filter: { _id }, update: { $set: { merchantId: d.merchantId }, $addToSet: { minutes: { $each: [...d.minutes] } } }, upsert: true },
  }));
  const merchants: AnyBulkWriteOperation<LedgerDoc>[] = [...w.merchants].map(([_id, m]) => ({
    updateOne: { filter: { _id }, update: { $set: { merchantId: m.merchantId }, $addToSet: { days: { $each: [...m.days] } } }, upsert: true },
  }));
  await inChunks(c, [...pages, ...orders]);
  await inChunks(c, [...days, ...merchants]);
}

async function inChunks(c: Collections, ops: AnyBulkWriteOperation<LedgerDoc>[]): Promise<void> {
  for (let i = 0; i < ops.length; i += MAX_UPDATES_PER_COMMAND) {
    await c.ledger.bulkWrite(ops.slice(i, i + MAX_UPDATES_PER_COMMAND), { ordered: false });
  }
}

/** The days (YYYYMMDD) with lines for this merchant, newest first. */
export async function ledgerDays(c: Collections, merchantId: string): Promise<string[]> {
  const doc = await c.ledger.findOne({ _id: ledgerIds.merchant(merchantId) });
  return [...(doc?.days ?? [])].sort().reverse();
}

/** The minutes (YYYYMMDDHHmm) of one day with lines, newest first. */
export async function ledgerMinutes(c: Collections, merchantId: string, day: string): Promise<string[]> {
  const doc = await c.ledger.findOne({ _id: ledgerIds.day(merchantId, day) });
  return [...(doc?.minutes ?? [])].sort().reverse();
}

export async function ledgerPage(c: Collections, merchantId: string, minute: string): Promise<LedgerLine[]> {
  return (await c.ledger.findOne({ _id: ledgerIds.page(merchantId, minute) }))?.lines ?? [];
}

export async function paymentIdsOfOrder(c: Collections, merchantId: string, orderRef: string): Promise<string[]> {
  return (await c.ledger.findOne({ _id: ledgerIds.order(merchantId, orderRef) }))?.paymentIds ?? [];
}
