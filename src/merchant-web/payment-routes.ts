import Router from '@koa/router';
import { z } from 'zod';
import { PAYMENT_STATUSES } from '@credit-facilitator/wire/payment-status';
import { PERMISSIONS } from '../auth/permissions.js';
import { ApiError } from '../domain/errors.js';
import { newNonce } from '../http/html.js';
import { batchView } from '../payments/batch-view.js';
import { listPayments } from '../payments/list-payments.js';
import { RefundBodySchema, BaseUnits } from '../payments/refund-body-schema.js';
import { prepareRefundAuthorization, refundPayment } from '../payments/refund-payment.js';
import { settledPaymentsBetween, toCsv } from '../payments/settlement-report.js';
import { paymentStatus } from '../payments/status.js';
import { withRefunds } from '../payments/refund-status.js';
import { voidPayment } from '../payments/void-payment.js';
import { actionCaller, pageCaller } from './console-auth.js';
import { batchesPage, batchPage, type BatchSummary } from './batches-page.js';
import type { MerchantWebDeps } from './deps.js';
import { parseFields } from './form.js';
import { href, sendPage } from './layout.js';
import { paymentPage } from './payment-page.js';
import { paymentsPage } from './payments-page.js';
import { refundPage } from './refund-page.js';

const PAGE_SIZE = 25;
const blank = (v: unknown) => (v === '' ? undefined : v);
const Day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD')
  .refine((d) => !Number.isNaN(new Date(`${d}T00:00:00Z`).getTime()), 'not a calendar date');
const dayStart = (d: string) => new Date(`${d}T00:00:00Z`);
const dayAfter = (d: string) => new Date(dayStart(d).getTime() + 86400_000);

const SearchQuery = z
  .strictObject({
    orderRef: z.preprocess(blank, z.string().max(256).optional()),
    paymentId: z.preprocess(blank, z.uuid('a payment id is a UUID').optional()),
    status: z.preprocess(blank, z.enum(PAYMENT_STATUSES).optional()),
    from: z.preprocess(blank, Day.optional()),
    to: z.preprocess(blank, Day.optional()),
    after: z.preprocess(blank, z.string().max(64).optional()),
  })
  .refine((q) => !(q.from && q.to && q.from > q.to), { message: 'the first day comes after the last', path: ['from'] });

const RefundQuery = z.strictObject({
  kind: z.enum(['full', 'partial']),
  amount: z.preprocess(blank, BaseUnits.optional()),
}).refine((q) => q.kind === 'full' || q.amount !== undefined, { message: 'give the amount to refund, in base units', path: ['amount'] });

const IdempotencyKey = z.uuid({ version: 'v4', message: 'the form lost its idempotency key: reload the page' });
const VoidForm = z.object({ idempotencyKey: IdempotencyKey });
const RefundForm = z.object({ idempotencyKey: IdempotencyKey, amount: z.string(), authorization: z.string().max(4096), signature: z.string().min(1, 'the payout wallet did not sign') });

const ExportQuery = z
  .strictObject({ from: Day, to: z.preprocess(blank, Day.optional()) })
  .refine((q) => !q.to || q.from <= q.to, { message: 'the first day comes after the last', path: ['from'] })
  .refine((q) => !q.to || dayStart(q.to).getTime() - dayStart(q.from).getTime() <= 366 * 86400_000, { message: 'export at most a year at a time', path: ['to'] });

const paymentPath = (id: string) => `/merchant/payments/${encodeURIComponent(id)}`;

/** The JSON of a hidden field, or a field error naming it. */
function jsonField(name: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw ApiError.invalidRequest([{ path: name, message: 'not valid JSON' }], 'The form is invalid; see fields.');
  }
}

/** Payments, a payment's timeline, void and refund, batches and the CSV export: the REST services behind the console's session. */
export function paymentRouter(deps: MerchantWebDeps): Router {
  const router = new Router({ prefix: '/merchant' });
  const chainId = deps.env.CHAIN_ID;

  router.get('/payments', async (ctx) => {
    const caller = await pageCaller(deps, ctx, PERMISSIONS.settleRead);
    const q = parseFields(SearchQuery, ctx.query, 'The search is invalid; see fields.');
    if (q.paymentId) return ctx.redirect(paymentPath(q.paymentId.toLowerCase()));
    const list = await listPayments(deps, caller.principal.merchantId, {
      limit: PAGE_SIZE,
      ...(q.after ? { startingAfter: q.after } : {}),
      ...(q.status ? { status: q.status } : {}),
      ...(q.orderRef ? { orderRef: q.orderRef } : {}),
      ...(q.from ? { createdFrom: dayStart(q.from).toISOString() } : {}),
      ...(q.to ? { createdBefore: dayAfter(q.to).toISOString() } : {}),
    });
    const search = { ...(q.orderRef ? { orderRef: q.orderRef } : {}), ...(q.status ? { status: q.status } : {}), ...(q.from ? { from: q.from } : {}), ...(q.to ? { to: q.to } : {}) };
    const next = list.has_more ? href('/merchant/payments', { ...search, after: list.data.at(-1)!.paymentId }) : null;
    sendPage(ctx, paymentsPage(caller, search, list.data, next));
  });

  router.get('/payments/:id', async (ctx) => {
    const caller = await pageCaller(deps, ctx, PERMISSIONS.settleRead);
    // As the REST poll answers it: the receipt, then its refunds.
    const receipt = await withRefunds(deps, await paymentStatus(deps, caller.principal.merchantId, ctx.params.id ?? ''));
    sendPage(ctx, paymentPage(caller, receipt, chainId));
  });

  router.post('/payments/:id/void', async (ctx) => {
    const { principal, form } = await actionCaller(deps, ctx, PERMISSIONS.settleCreate, 'capture');
    const { idempotencyKey } = parseFields(VoidForm, form);
    const done = await voidPayment(deps, { merchantId: principal.merchantId, paymentId: ctx.params.id ?? '', idempotencyKey: idempotencyKey.toLowerCase() });
    ctx.status = 303;
    ctx.redirect(paymentPath(done.receipt.paymentId));
  });

  // The typed data needs what the REST refund-authorization route needs (read); the refund itself needs create and step-up.
  router.get('/payments/:id/refund', async (ctx) => {
    const caller = await pageCaller(deps, ctx, PERMISSIONS.settleRead);
    const q = parseFields(RefundQuery, ctx.query);
    const merchantId = caller.principal.merchantId;
    const paymentId = ctx.params.id ?? '';
    let amount = q.kind === 'partial' ? q.amount! : (await paymentStatus(deps, merchantId, paymentId)).amount;
    let prepared;
    try {
      prepared = await prepareRefundAuthorization(deps, { merchantId, paymentId, amount });
    } catch (err) {
      // "All that is left": the payment less what earlier refunds hold.
      const left = err instanceof ApiError && err.code === 'REFUND_EXCEEDS_PAYMENT' && q.kind === 'full' ? String(err.extra?.refundable ?? '0') : null;
      if (!left || left === '0') throw err;
      amount = left;
      prepared = await prepareRefundAuthorization(deps, { merchantId, paymentId, amount });
    }
    const nonce = newNonce();
    const typedData = prepared.typedData as unknown as { message: Record<string, unknown> } & Record<string, unknown>;
    sendPage(ctx, refundPage(caller, { paymentId: paymentId.toLowerCase(), amount, refundable: prepared.refundable, payoutAddress: String(typedData.message.from), chainId, typedData }, nonce), nonce);
  });

  router.post('/payments/:id/refunds', async (ctx) => {
    const { principal, form } = await actionCaller(deps, ctx, PERMISSIONS.settleCreate, 'capture');
    const f = parseFields(RefundForm, form);
    const body = parseFields(RefundBodySchema, { amount: f.amount, authorization: jsonField('authorization', f.authorization), signature: f.signature });
    await refundPayment(deps, { merchantId: principal.merchantId, paymentId: ctx.params.id ?? '', idempotencyKey: f.idempotencyKey.toLowerCase(), body });
    ctx.status = 303;
    ctx.redirect(paymentPath(String(ctx.params.id).toLowerCase()));
  });

  router.get('/batches', async (ctx) => {
    const caller = await pageCaller(deps, ctx, PERMISSIONS.settleRead);
    const recent = await listPayments(deps, caller.principal.merchantId, { limit: 100 });
    const byBatch = new Map<string, BatchSummary>();
    for (const p of recent.data) {
      if (!p.batchId) continue;
      const b = byBatch.get(p.batchId) ?? { batchId: p.batchId, payments: 0, amount: '0', latestCapture: p.capturedAt, status: p.status };
      b.payments++;
      b.amount = (BigInt(b.amount) + BigInt(p.amount)).toString();
      byBatch.set(p.batchId, b);
    }
    sendPage(ctx, batchesPage(caller, [...byBatch.values()]));
  });

  router.get('/batches/:id', async (ctx) => {
    const caller = await pageCaller(deps, ctx, PERMISSIONS.settleRead);
    sendPage(ctx, batchPage(caller, await batchView(deps, caller.principal.merchantId, ctx.params.id ?? ''), chainId));
  });

  router.get('/export.csv', async (ctx) => {
    const caller = await pageCaller(deps, ctx, PERMISSIONS.settleRead);
    const q = parseFields(ExportQuery, ctx.query, 'The export period is invalid; see fields.');
    const to = q.to ? dayAfter(q.to) : new Date(deps.nowMs());
    const rows = await settledPaymentsBetween(deps, caller.principal.merchantId, dayStart(q.from), to);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Disposition', `attachment; filename="payments-${q.from}${q.to ? `-${q.to}` : ''}.csv"`);
    ctx.type = 'text/csv; charset=utf-8';
    ctx.body = toCsv(rows);
  });

  return router;
}
