import { ApiError } from '../domain/errors.js';
import { isUuid } from '@credit-facilitator/wire/ids';
import { dayKey, isAfter, minuteKey, newestFirst, type LedgerLine } from '../domain/payment-ledger.js';
import { paymentStateInBatch, type PaymentStatus, type Receipt } from '../domain/payment.js';
import { ledgerDays, ledgerMinutes, ledgerPage, paymentIdsOfOrder } from '../store/payment-ledger.js';
import { findPayment, findPayments } from '../store/payments.js';
import { withBatchOutcomes } from '../store/payment-outcomes.js';
import { allQueues, readQueues } from '../store/settlement/queue.js';
import { findBatch } from '../store/settlement/batches.js';
import { acceptedReceipt, type StatusDeps } from './status.js';

export interface PaymentListQuery {
  limit: number;
  startingAfter?: string;
  status?: PaymentStatus;
  /** Capture time bounds, ISO 8601 (inclusive lower, exclusive upper). */
  createdFrom?: string;
  createdBefore?: string;
  orderRef?: string;
  batchId?: string;
}

export interface PaymentList {
  object: 'list';
  data: Receipt[];
  has_more: boolean;
}

type Position = { capturedAt: string; paymentId: string };

/**
 * A merchant's payments, newest first, a page at a time (Stripe's limit / starting_after /
 * has_more). Finished payments come from the ledger the shards write as each batch ends (read by
 * _id only: see src/domain/payment-ledger.ts); payments still moving come from the settlement
 * queues, which hold only those. A filter by orderRef or batchId starts from its own index.
 */
export async function listPayments(deps: StatusDeps, merchantId: string, q: PaymentListQuery): Promise<PaymentList> {
  const cursor = q.startingAfter ? await positionOf(deps, merchantId, q.startingAfter) : undefined;
  const keep = (r: Receipt) =>
    (!q.status || r.status === q.status) &&
    (!q.createdFrom || r.capturedAt >= q.createdFrom) &&
    (!q.createdBefore || r.capturedAt < q.createdBefore) &&
    (!q.orderRef || r.orderRef === q.orderRef) &&
    (!cursor || isAfter(r, cursor));
  if (q.batchId || q.orderRef) return page(await receiptsByIds(deps, merchantId, await idsFor(deps, merchantId, q)), keep, q.limit);

  const pending = (await pendingReceipts(deps, merchantId)).filter(keep);
  const upper = cursor ? minIso(cursor.capturedAt, q.createdBefore) : q.createdBefore;
  const inRange = (key: string, keyOf: (d: Date) => string) =>
    (!upper || key <= keyOf(new Date(upper))) && (!q.createdFrom || key >= keyOf(new Date(q.createdFrom)));
  const days = union(await ledgerDays(deps.store.c, merchantId), pending.map((r) => dayKey(new Date(r.capturedAt)))).filter((d) => inRange(d, dayKey));
  const out: Receipt[] = [];
  for (const day of days) {
    const minutes = union(
      await ledgerMinutes(deps.store.c, merchantId, day),
      pending.filter((r) => dayKey(new Date(r.capturedAt)) === day).map((r) => minuteKey(new Date(r.capturedAt))),
    ).filter((m) => inRange(m, minuteKey));
    for (const minute of minutes) {
      const lines = await ledgerPage(deps.store.c, merchantId, minute);
      const finished = await Promise.all(lines.map((l) => receiptOfLine(deps, merchantId, l)));
      const seen = new Set(finished.map((r) => r.paymentId));
      const moving = pending.filter((r) => !seen.has(r.paymentId) && minuteKey(new Date(r.capturedAt)) === minute);
      out.push(...[...finished.filter(keep), ...moving].sort(newestFirst));
      if (out.length > q.limit) return { object: 'list', data: out.slice(0, q.limit), has_more: true };
    }
  }
  return { object: 'list', data: out, has_more: false };
}

function page(receipts: Receipt[], keep: (r: Receipt) => boolean, limit: number): PaymentList {
  const all = receipts.filter(keep).sort(newestFirst);
  return { object: 'list', data: all.slice(0, limit), has_more: all.length > limit };
}

async function positionOf(deps: StatusDeps, merchantId: string, paymentId: string): Promise<Position> {
  const doc = isUuid(paymentId) ? await findPayment(deps.store.c, paymentId.toLowerCase()) : null;
  if (!doc || doc.merchantId !== merchantId) {
    throw ApiError.invalidRequest([{ path: 'starting_after', message: 'no payment of yours has this id' }]);
  }
  return { capturedAt: doc.capturedAt.toISOString(), paymentId: doc._id };
}

async function idsFor(deps: StatusDeps, merchantId: string, q: PaymentListQuery): Promise<string[]> {
  const c = deps.store.c;
  if (q.batchId) {
    const batch = isUuid(q.batchId) ? await findBatch(c, q.batchId.toLowerCase()) : null;
    return batch?.paymentIds ?? [];
  }
  const pending = (await pendingEntries(deps, merchantId)).filter((e) => e.workflow.orderRef === q.orderRef).map((e) => e._id);
  return union(await paymentIdsOfOrder(c, merchantId, q.orderRef!), pending);
}

/**
 * Each id's receipt as a poll would answer it, in no particular order; ids of other merchants, and
 * captures not accepted, are left out. The payments and their batches' outcomes are read by ids
 * (three commands for up to 500), so a settled payment needs no read of its own.
 */
export async function receiptsByIds(deps: StatusDeps, merchantId: string, ids: readonly string[]): Promise<Receipt[]> {
  const mine = (await findPayments(deps.store.c, ids)).filter((d) => d.merchantId === merchantId);
  const receipts = await Promise.all((await withBatchOutcomes(deps.store.c, mine)).map((d) => acceptedReceipt(deps, d)));
  return receipts.filter((r): r is Receipt => r !== null);
}

async function pendingEntries(deps: StatusDeps, merchantId: string) {
  const queued = await readQueues(deps.store.c, await allQueues(deps.store.db));
  return queued.filter((e) => e.merchantId === merchantId);
}

async function pendingReceipts(deps: StatusDeps, merchantId: string): Promise<Receipt[]> {
  return receiptsByIds(deps, merchantId, (await pendingEntries(deps, merchantId)).map((e) => e._id));
}

/** A finished line as a receipt; the batch supplies the transaction, block and times. */
async function receiptOfLine(deps: StatusDeps, merchantId: string, l: LedgerLine): Promise<Receipt> {
  const r: Receipt = {
    paymentId: l.paymentId,
    status: l.status,
    merchantId,
    payer: l.payer,
    amount: l.amount,
    asset: l.asset,
    network: l.network,
    orderRef: l.orderRef,
    capturedAt: l.capturedAt,
  };
  if (l.voidedAt) r.voidedAt = l.voidedAt;
  if (!l.batchId) return r;
  const cache = deps.statusCache;
  const batch = cache ? await cache.batch(deps.store.c, deps.env.SETTLEMENT_SHARDS, l.batchId, deps.nowMs()) : await findBatch(deps.store.c, l.batchId);
  if (!batch) return { ...r, batchId: l.batchId };
  const state = paymentStateInBatch(batch);
  return { ...toReceiptFields(r, state), status: l.status };
}

function toReceiptFields(r: Receipt, s: { batchId?: string; transaction?: string; blockNumber?: string; confirmedAt?: string; failureReason?: string }): Receipt {
  return {
    ...r,
    ...(s.batchId ? { batchId: s.batchId } : {}),
    ...(s.transaction ? { transaction: s.transaction } : {}),
    ...(s.blockNumber ? { blockNumber: s.blockNumber } : {}),
    ...(s.confirmedAt ? { confirmedAt: s.confirmedAt } : {}),
    ...(s.failureReason ? { failureReason: s.failureReason } : {}),
  };
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort().reverse();
}

function minIso(a: string, b: string | undefined): string {
  return b && b < a ? b : a;
}
