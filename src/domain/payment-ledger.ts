/**
 * The merchant's payment ledger: each payment's final line (CONFIRMED, FAILED or VOIDED), kept in
 * pages the store reads by _id only. FerretDB v1 answers only an exact `_id` filter from an index
 * (any other filter scans the collection), so the list is laid out as keys:
 *
 *   `m|<merchantId>`                      days with lines, `YYYYMMDD`
 *   `d|<merchantId>|<YYYYMMDD>`           minutes of that day with lines, `YYYYMMDDHHmm`
 *   `p|<merchantId>|<YYYYMMDDHHmm>`       the lines of payments captured in that minute
 *   `o|<merchantId>|<orderRef>`           the payment ids of that orderRef
 *
 * A listing walks days, then minutes, newest first, reading one page per minute; each page holds
 * the payments captured in its minute, so a page stays small at any rate a shard can settle.
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
  page: (merchantId: string, minute: string) => `p|${merchantId}|${minute}`,
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

/** The writes that add these lines: one page update per minute, one day update per day, one merchant update, one per orderRef. */
export interface LedgerWrites {
  pages: Map<string, { merchantId: string; minute: string; lines: LedgerLine[] }>;
  days: Map<string, { merchantId: string; day: string; minutes: Set<string> }>;
  merchants: Map<string, { merchantId: string; days: Set<string> }>;
  orders: Map<string, { merchantId: string; orderRef: string; paymentIds: Set<string> }>;
}

export function ledgerWrites(lines: ReadonlyArray<LedgerLine & { merchantId: string }>): LedgerWrites {
  const w: LedgerWrites = { pages: new Map(), days: new Map(), merchants: new Map(), orders: new Map() };
  for (const { merchantId, ...line } of lines) {
    const at = new Date(line.capturedAt);
    const day = dayKey(at);
    const minute = minuteKey(at);
    const page = ledgerIds.page(merchantId, minute);
    if (!w.pages.has(page)) w.pages.set(page, { merchantId, minute, lines: [] });
    w.pages.get(page)!.lines.push(canonicalLine(line));
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
