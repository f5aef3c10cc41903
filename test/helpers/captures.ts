import { paymentStateInBatch, type PaymentState } from '../../src/domain/payment.js';
import assert from 'node:assert/strict';
import type { PaymentDoc } from '../../src/store/documents.js';
import { paymentAfterBatch } from '../../src/store/payment-outcomes.js';
import { findPayments } from '../../src/store/payments.js';
import { batchHolds, findClaims } from '../../src/store/settlement/claims.js';
import { findBatches } from '../../src/store/settlement/batches.js';
import { capture, newBorrower, newMerchant, newVoucher, UNTHROTTLED, type TestBorrower, type TestMerchant, type TestVoucher, type World } from './world.js';

/** A fresh merchant and borrower, used by one test only, so their balances are that test's sums. */
export interface Parties {
  merchant: TestMerchant;
  borrower: TestBorrower;
}

export async function newParties(w: World, name: string): Promise<Parties> {
  const [merchant, borrower] = await Promise.all([newMerchant(w, name, { rateLimits: UNTHROTTLED }), newBorrower(w)]);
  return { merchant, borrower };
}

/** A captured payment and what it must add up to once settled. */
export interface CapturedPayment {
  paymentId: string;
  amount: bigint;
  merchant: TestMerchant;
  borrowerId: string;
}

export interface PreparedVoucher {
  voucher: TestVoucher;
  amount: bigint;
}

/** prepare_x402_payment and the agent's signature for each amount (needs no worker). */
export async function prepareVouchers(w: World, p: Parties, amounts: bigint[]): Promise<PreparedVoucher[]> {
  const out: PreparedVoucher[] = [];
  for (const amount of amounts) out.push({ voucher: await newVoucher(w, p.merchant, p.borrower, amount.toString()), amount });
  return out;
}

/** POST /facilitator/capture for each voucher; every capture must answer 200 QUEUED. */
export async function captureVouchers(w: World, p: Parties, vouchers: PreparedVoucher[]): Promise<CapturedPayment[]> {
  const out: CapturedPayment[] = [];
  for (const { voucher, amount } of vouchers) {
    const res = await capture(w, p.merchant, voucher.captureBody, voucher.idempotencyKey);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.receipt.status, 'QUEUED');
    out.push({ paymentId: res.json.receipt.paymentId, amount, merchant: p.merchant, borrowerId: p.borrower.borrowerId });
  }
  return out;
}

export async function capturePayments(w: World, p: Parties, amounts: bigint[]): Promise<CapturedPayment[]> {
  return captureVouchers(w, p, await prepareVouchers(w, p, amounts));
}

/**
 * A payment as a status poll sees it: its document with its claimed batch's outcome
 * (store/payment-outcomes.ts), and while that is not terminal the state of the batch its
 * settlement claim binds it to (settlement_claims, settlement_batches).
 */
export type PaymentView = PaymentDoc & { settlementBatchId?: string };

type DocTest = (doc: PaymentView) => boolean;

/** The payments' documents joined with their settlement claims and their batches' recorded state. */
export async function paymentViews(w: World, ids: string[]): Promise<PaymentView[]> {
  const [docs, claims] = await Promise.all([findPayments(w.store.c, ids), findClaims(w.store.c, ids)]);
  const batchOf = new Map(claims.map((c) => [c._id, c.batchId]));
  const batches = await findBatches(w.store.c, [...batchOf.values()]);
  const batchById = new Map(batches.map((b) => [b._id, b]));
  return docs.map((d) => {
    const batchId = batchOf.get(d._id);
    const found = batchId ? batchById.get(batchId) : undefined;
    const batch = found && batchHolds(found, d._id) ? found : undefined;
    const settled = batch && d.status === 'CAPTURING' ? paymentAfterBatch(d, batch) : d;
    const view: PaymentView = batchId ? { ...settled, settlementBatchId: batchId } : { ...settled };
    if (settled.status !== 'CAPTURING') return view; // terminal, or a legacy workflow's own projection
    const state: PaymentState = batch ? paymentStateInBatch(batch) : { status: 'QUEUED', attempts: 0 };
    const { transaction: _t, batchId: _b, ...rest } = view;
    return {
      ...rest,
      status: state.status,
      ...(state.batchId ? { batchId: state.batchId } : {}),
      ...(state.transaction ? { transaction: state.transaction } : {}),
    };
  });
}

/** Polls the store until every payment's projection satisfies `ok`; returns the docs. */
export function waitForPayments(w: World, payments: CapturedPayment[], what: string, ok: DocTest, timeoutMs = 60_000): Promise<PaymentView[]> {
  return pollDocs(w, payments, what, (docs) => docs.length === payments.length && docs.every(ok), timeoutMs);
}

/** Polls the store until at least one payment's projection satisfies `ok`. */
export function waitForAny(w: World, payments: CapturedPayment[], what: string, ok: DocTest, timeoutMs = 60_000): Promise<PaymentView[]> {
  return pollDocs(w, payments, what, (docs) => docs.some(ok), timeoutMs);
}

async function pollDocs(w: World, payments: CapturedPayment[], what: string, done: (docs: PaymentView[]) => boolean, timeoutMs: number): Promise<PaymentView[]> {
  const ids = payments.map((p) => p.paymentId);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const docs = await paymentViews(w, ids);
    if (done(docs)) return docs;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for payments to be ${what}: ${JSON.stringify(docs.map((d) => [d._id, d.status, d.settlementBatchId ?? null]))}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
