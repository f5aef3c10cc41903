import type { AnyBulkWriteOperation } from 'mongodb';
import { ledgerIds, ledgerWrites, type LedgerLine } from '../domain/payment-ledger.js';
import type { Collections } from './collections.js';
import type { LedgerDoc } from './documents.js';
import { insertNew } from './insert-new.js';
import { MAX_UPDATES_PER_COMMAND } from './update-commands.js';

/**
 * Index entries (a minute in its day, a day in its merchant) this process has written, per store:
 * a batch end adds the same day and minute for a merchant over and over, and an entry once written
 * stays, so each is sent once per process and minute rather than once per batch.
 */
const knownEntries = new WeakMap<Collections, Set<string>>();
const MAX_KNOWN_ENTRIES = 100_000;

function knownOf(c: Collections): Set<string> {
  let known = knownEntries.get(c);
  if (!known || known.size > MAX_KNOWN_ENTRIES) knownEntries.set(c, (known = new Set()));
  return known;
}

/**
 * Adds payments' final lines to their merchants' ledgers, as `writer`'s pages (a batch id, or
 * `void-<paymentId>`). Pages and orders are inserted as new documents (a retried writer finds its
 * pages there and keeps them: their lines are built from facts that never change; an order already
 * there gets a set-add), then each page joins its minute's index, then the day and merchant indexes
 * that lead to the minutes: a reader never finds a minute or a writer with no page. The indexes
 * are set-adds too, so a retry writes nothing twice.
 */
export async function recordLedgerLines(c: Collections, writer: string, lines: ReadonlyArray<LedgerLine & { merchantId: string }>): Promise<void> {
  if (lines.length === 0) return;
  const w = ledgerWrites(writer, lines);
  const pages: LedgerDoc[] = [...w.pages].map(([_id, p]) => ({ _id, merchantId: p.merchantId, lines: p.lines }));
  const orders: LedgerDoc[] = [...w.orders].map(([_id, o]) => ({ _id, merchantId: o.merchantId, paymentIds: [...o.paymentIds] }));
  // One insert for the new pages and orders; an order already there (its orderRef paid before, or a retry) gets a set-add.
  const present = await insertNew(c.ledger, [...pages, ...orders]);
  const reusedOrders: AnyBulkWriteOperation<LedgerDoc>[] = orders
    .filter((_, k) => present.has(pages.length + k))
    .map(({ _id, paymentIds }) => ({ updateOne: { filter: { _id }, update: { $addToSet: { paymentIds: { $each: paymentIds ?? [] } } } } }));
  const minuteIndexes: AnyBulkWriteOperation<LedgerDoc>[] = [...w.minutes].map(([_id, m]) => ({
    updateOne: { filter: { _id }, update: { $set: { merchantId: m.merchantId }, $addToSet: { writers: writer } }, upsert: true },
  }));
  await inChunks(c, [...reusedOrders, ...minuteIndexes]);
  // Minutes into their days first, then days into their merchants: a day is listed only once its minutes are.
  await addIndexEntries(c, [...w.days].map(([_id, d]) => ({ _id, merchantId: d.merchantId, entries: d.minutes })), 'minutes');
  await addIndexEntries(c, [...w.merchants].map(([_id, m]) => ({ _id, merchantId: m.merchantId, entries: m.days })), 'days');
}

/** Set-adds the entries this process has not written yet to their index documents, then remembers them. */
async function addIndexEntries(c: Collections, docs: { _id: string; merchantId: string; entries: Set<string> }[], field: 'minutes' | 'days'): Promise<void> {
  const known = knownOf(c);
  const fresh = docs.map((d) => ({ ...d, add: [...d.entries].filter((e) => !known.has(`${d._id}|${e}`)) })).filter((d) => d.add.length > 0);
  await inChunks(c, fresh.map(({ _id, merchantId, add }) => ({ updateOne: { filter: { _id }, update: { $set: { merchantId }, $addToSet: { [field]: { $each: add } } }, upsert: true } })));
  for (const { _id, add } of fresh) for (const e of add) known.add(`${_id}|${e}`);
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

/** A minute's lines: every writer's page listed in its index, and the page releases before wrote whole. */
export async function ledgerPage(c: Collections, merchantId: string, minute: string): Promise<LedgerLine[]> {
  const [whole, index] = await Promise.all([
    c.ledger.findOne({ _id: ledgerIds.page(merchantId, minute) }),
    c.ledger.findOne({ _id: ledgerIds.minute(merchantId, minute) }),
  ]);
  const pages = await Promise.all((index?.writers ?? []).map((writer) => c.ledger.findOne({ _id: ledgerIds.writerPage(merchantId, minute, writer) })));
  const lines = new Map<string, LedgerLine>();
  for (const page of [whole, ...pages]) for (const line of page?.lines ?? []) lines.set(line.paymentId, line);
  return [...lines.values()];
}

export async function paymentIdsOfOrder(c: Collections, merchantId: string, orderRef: string): Promise<string[]> {
  return (await c.ledger.findOne({ _id: ledgerIds.order(merchantId, orderRef) }))?.paymentIds ?? [];
}
