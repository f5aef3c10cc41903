/**
 * The merchant's payment ledger: each payment's final line (CONFIRMED, FAILED or VOIDED), kept in
 * pages the store reads by _id only. FerretDB v1 answers only an exact `_id` filter from an index
 * (any other filter scans the collection), so the list is laid out as keys:
 *
 *   `m|<merchantId>`                        days with lines, `YYYYMMDD`
 *   `d|<merchantId>|<YYYYMMDD>`             minutes of that day with lines, `YYYYMMDDHHmm`
 *   `i|<merchantId>|<YYYYMMDDHHmm>`         the writers (batch ids, `void-<paymentId>`) with a page in that minute
 *   `p|<merchantId>|<YYYYMMDDHHmm>|<writer>` one writer's lines of payments captured in that minute
 *   `p|<merchantId>|<YYYYMMDDHHmm>`         the minute's lines as releases before per-writer pages wrote them
 *   `o|<merchantId>|<orderRef>`             the payment ids of that orderRef
 *
 * A listing walks days, then minutes, newest first, reading a minute's pages by its index. Each
 * writer (a batch end, a void) inserts pages of its own instead of adding to a minute's page:
 * FerretDB v1 rewrites a whole document on any update, so adding to a page that grows all minute
 * cost in proportion to the page, and a new document costs a small insert (docs/design.md).
 */

import type { PaymentStatus, Receipt } from './payment.js';

export type LedgerStatus = Extract<PaymentStatus, 'CONFIRMED' | 'FAILED' | 'VOIDED'>;

/** One payment's final line. Built only from facts that never change, so a repeated write is the same value. */
export interface LedgerLine {
  paymentId: string;
  /** Capture time, ISO 8601 (the list's order). */
  capturedAt: string;
  status: LedgerStatus;
  /** The borrower id. */
  payer: string;
  amount: string;
  asset: string;
  network: string;
  orderRef: string;
  batchId?: string;
  /** ISO 8601, VOIDED lines only. */
  voidedAt?: string;
}

/** A final receipt (CONFIRMED, FAILED or VOIDED) as its merchant's ledger line. */
export function ledgerLineOf(r: Receipt): LedgerLine & { merchantId: string } {
  if (r.status !== 'CONFIRMED' && r.status !== 'FAILED' && r.status !== 'VOIDED') throw new Error(`a ${r.status} payment has no ledger line yet`);
  return {
    merchantId: r.merchantId,
    paymentId: r.paymentId,
    capturedAt: r.capturedAt,
    status: r.status,
    payer: r.payer,
    amount: r.amount,
    asset: r.asset,
    network: r.network,
    orderRef: r.orderRef,
    ...(r.batchId ? { batchId: r.batchId } : {}),
    ...(r.voidedAt ? { voidedAt: r.voidedAt } : {}),
  };
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

export function dayKey(at: Date): string {
  return `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}`;
}

export function minuteKey(at: Date): string {
  return `${dayKey(at)}${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}`;
}

export const ledgerIds = {
  merchant: (merchantId: string) => `m|${merchantId}`,
  day: (merchantId: string, day: string) => `d|${merchantId}|${day}`,
  /** A minute's page as releases before per-writer pages wrote it (still read, never written). */
  page: (merchantId: string, minute: string) => `p|${merchantId}|${minute}`,
  /** One writer's page of a minute. */
  writerPage: (merchantId: string, minute: string, writer: string) => `p|${merchantId}|${minute}|${writer}`,
  /** The writers with a page in a minute. */
  minute: (merchantId: string, minute: string) => `i|${merchantId}|${minute}`,
  order: (merchantId: string, orderRef: string) => `o|${merchantId}|${orderRef}`,
};

/** Newest first; payments captured in the same millisecond by id, so the order is total. */
export function newestFirst(a: { capturedAt: string; paymentId: string }, b: { capturedAt: string; paymentId: string }): number {
  if (a.capturedAt !== b.capturedAt) return a.capturedAt < b.capturedAt ? 1 : -1;
  return a.paymentId < b.paymentId ? 1 : a.paymentId > b.paymentId ? -1 : 0;
}

/** True when `line` comes after `cursor` in newest-first order. */
export function isAfter(line: { capturedAt: string; paymentId: string }, cursor: { capturedAt: string; paymentId: string }): boolean {
  return newestFirst(line, cursor) > 0;
}

/**
 * The writes that add one writer's lines: a new page per merchant and minute, that page joining its
 * minute's index, and one update per day, merchant and orderRef.
 */
export interface LedgerWrites {
  /** By writer page id: the writer's lines of one merchant and minute. */
  pages: Map<string, { merchantId: string; minute: string; lines: LedgerLine[] }>;
  /** By minute index id: the minutes whose index the writer joins. */
  minutes: Map<string, { merchantId: string; minute: string }>;
  days: Map<string, { merchantId: string; day: string; minutes: Set<string> }>;
  merchants: Map<string, { merchantId: string; days: Set<string> }>;
  orders: Map<string, { merchantId: string; orderRef: string; paymentIds: Set<string> }>;
}

export function ledgerWrites(writer: string, lines: ReadonlyArray<LedgerLine & { merchantId: string }>): LedgerWrites {
  const w: LedgerWrites = { pages: new Map(), minutes: new Map(), days: new Map(), merchants: new Map(), orders: new Map() };
  for (const { merchantId, ...line } of lines) {
    const at = new Date(line.capturedAt);
    const day = dayKey(at);
    const minute = minuteKey(at);
    const page = ledgerIds.writerPage(merchantId, minute, writer);
    if (!w.pages.has(page)) w.pages.set(page, { merchantId, minute, lines: [] });
    w.pages.get(page)!.lines.push(canonicalLine(line));
    w.minutes.set(ledgerIds.minute(merchantId, minute), { merchantId, minute });
    const dayId = ledgerIds.day(merchantId, day);
    if (!w.days.has(dayId)) w.days.set(dayId, { merchantId, day, minutes: new Set() });
    w.days.get(dayId)!.minutes.add(minute);
    const m = ledgerIds.merchant(merchantId);
    if (!w.merchants.has(m)) w.merchants.set(m, { merchantId, days: new Set() });
    w.merchants.get(m)!.days.add(day);
    const o = ledgerIds.order(merchantId, line.orderRef);
    if (!w.orders.has(o)) w.orders.set(o, { merchantId, orderRef: line.orderRef, paymentIds: new Set() });
    w.orders.get(o)!.paymentIds.add(line.paymentId);
  }
  return w;
}

/** The same fields in the same order every time: the store's set-add compares documents field by field. */
export function canonicalLine(l: LedgerLine): LedgerLine {
  return {
    paymentId: l.paymentId,
    capturedAt: l.capturedAt,
    status: l.status,
    payer: l.payer,
    amount: l.amount,
    asset: l.asset,
    network: l.network,
    orderRef: l.orderRef,
    ...(l.batchId ? { batchId: l.batchId } : {}),
    ...(l.voidedAt ? { voidedAt: l.voidedAt } : {}),
  };
}
