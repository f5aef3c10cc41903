import type { PaymentDeps } from './deps.js';
import { fingerprint } from '@credit-facilitator/wire/canonical';
import { parseCreditPayload, type PaymentRequirements } from '@credit-facilitator/wire/envelope';
import { ApiError } from '../domain/errors.js';
import { newId } from '@credit-facilitator/wire/ids';
import type { Receipt } from '../domain/payment.js';
import { evaluateVoucher, type VerificationInput } from '../domain/verification.js';
import type { InvalidReason } from '@credit-facilitator/wire/invalid-reasons';
import type { Voucher } from '@credit-facilitator/wire/voucher';
import type { PaymentDoc, SpendIntentFateDoc } from '../store/documents.js';
import { claimIdempotencyKey, idempotencyId, releaseIdempotencyKey } from '../store/idempotency.js';
import { isDuplicateKey } from '../store/mongo.js';
import { deleteUnacceptedPayment, findPayment, findPaymentByVoucher, insertPayment } from '../store/payments.js';
import { consumeSpendIntentOrFate, findSpendIntentFate } from '../store/spend-intents.js';
import { dequeueRefused, enqueueForSettlement } from '../store/settlement/queue.js';
import { loadCaptureContext, type CaptureContext } from './context.js';
import { contextWithFate, fateMayChange, lostClaimReason } from './intent-view.js';
import { toReceipt } from '../settlement/receipt.js';
import { finishCapture } from './finish-capture.js';
import { acceptedReceipt } from './status.js';
import { withOriginalPayment } from './original-payment.js';
import type { PhaseTimer } from '../observability/phase-timer.js';
import { activeTraceparent, tracingOn, withSpan } from '../observability/tracing.js';

export interface CaptureRequest {
  merchantId: string;
  /** The merchant's payout address when the caller already read it (the authenticated principal). */
  payoutAddress?: string;
  idempotencyKey: string;
  body: { x402Version: number; paymentPayload: Record<string, unknown>; paymentRequirements?: PaymentRequirements };
  /** Marks the handler's phases for Server-Timing, when profiling is on. */
  timer?: PhaseTimer | undefined;
}

export interface CaptureResult {
  receipt: Receipt;
  replayed: boolean;
}

/**
 * Capture moves money, so every step after the voucher is claimed is idempotent: a retry with the
 * same key resumes a capture that stopped half-way, and concurrent duplicates converge on one
 * payment. The answer waits for the durable writes only (key, voucher, spend intent); the payment
 * workflow starts right after it (finish-capture.ts). See docs/design.md "Money path".
 */
export function capturePayment(deps: PaymentDeps, req: CaptureRequest): Promise<CaptureResult> {
  if (!tracingOn()) return capture(deps, req, undefined);
  return withSpan('capture', { attributes: { 'x402.merchant.id': req.merchantId } }, async (span) => {
    // The payment's settlement queue entry keeps this span's context: its batch's spans link back to it.
    const result = await capture(deps, req, activeTraceparent());
    span.setAttributes({ 'x402.payment.id': result.receipt.paymentId, 'x402.capture.replayed': result.replayed });
    return result;
  });
}

async function capture(deps: PaymentDeps, req: CaptureRequest, traceparent: string | undefined): Promise<CaptureResult> {
  const c = deps.store.c;
  const now = new Date(deps.nowMs());
  const keyId = idempotencyId(req.merchantId, req.idempotencyKey);
  const retentionMs = deps.env.IDEMPOTENCY_RETENTION_HOURS * 3600_000;
  const bodyFingerprint = fingerprint(req.body);
  const newPaymentId = newId();
  // The store reads the rules need run while the key is claimed: a new capture waits for one round trip, not two.
  const prefetched = prefetchContext(deps, req, newPaymentId);
  const claim = await claimIdempotencyKey(
    c,
    { _id: keyId, merchantId: req.merchantId, fingerprint: bodyFingerprint, paymentId: newPaymentId, createdAt: now, expiresAt: new Date(now.getTime() + retentionMs) },
    now,
  );
  if (claim.kind === 'existing' && claim.doc.fingerprint !== bodyFingerprint) throw ApiError.idempotencyKeyConflict();
  const paymentId = claim.doc.paymentId;
  const replayed = claim.kind === 'existing';
  req.timer?.mark('idempotency_key');

  const existing = replayed ? await findPayment(c, paymentId) : null;
  const current = existing ? await acceptedReceipt(deps, existing) : null;
  if (current) return { receipt: current, replayed };

  try {
    if (existing) return { receipt: await accept(deps, existing, req.timer, { traceparent }), replayed };
    const { doc, lostReason } = await admit(deps, req, paymentId, now, claim.kind === 'claimed' ? prefetched : undefined, traceparent);
    return { receipt: await accept(deps, doc, req.timer, { queued: true, lostReason }), replayed };
  } catch (err) {
    if (claim.kind === 'claimed' && err instanceof ApiError) await releaseIdempotencyKey(c, keyId, paymentId);
    throw await withOriginalPayment(c, err, req.merchantId, req.body, paymentId);
  }
}

type Prefetched = Promise<{ ok: true; loaded: CaptureContext } | { ok: false; error: unknown }> | undefined;

/** The verification context for a new capture, loaded beside the key claim; failures surface only if it is used. */
function prefetchContext(deps: PaymentDeps, req: CaptureRequest, paymentId: string): Prefetched {
  const parsed = parseCreditPayload(req.body.x402Version, req.body.paymentPayload);
  if (!parsed.ok) return undefined;
  return loadCaptureContext(deps, req.merchantId, parsed.voucher, paymentId, req.payoutAddress).then(
    (loaded) => ({ ok: true as const, loaded }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** Why a lost claim is refused, given the intent's fate (the one decided first; null when none is). */
type LostReason = (fate: SpendIntentFateDoc | null) => InvalidReason;

/**
 * Checks the voucher, then claims it with one insert (the unique voucherId index refuses a second
 * use) while putting the payment in its settlement queue; a refused claim takes the entry back out.
 * The spend intent's fate is not read on the way (the consume in accept() decides it); a refusal
 * reads it, so the client gets the reason a check of the fate up front gave.
 */
async function admit(
  deps: PaymentDeps,
  req: CaptureRequest,
  paymentId: string,
  now: Date,
  prefetched: Prefetched,
  traceparent: string | undefined,
): Promise<{ doc: PaymentDoc; lostReason: LostReason }> {
  const parsed = parseCreditPayload(req.body.x402Version, req.body.paymentPayload);
  if (!parsed.ok) throw ApiError.paymentRejected(parsed.reason);
  const { voucher } = parsed;
  const early = prefetched ? await prefetched : undefined;
  if (early && !early.ok) throw early.error;
  const { ctx, intent } = early?.loaded ?? (await loadCaptureContext(deps, req.merchantId, voucher, paymentId, req.payoutAddress));
  req.timer?.mark('load_context');
  const input: VerificationInput = {
    voucher,
    signature: parsed.signature,
    ...(parsed.accepted ? { accepted: parsed.accepted } : {}),
    ...(req.body.paymentRequirements ? { requirements: req.body.paymentRequirements } : {}),
  };
  const c = deps.store.c;
  let verdict = evaluateVoucher(input, ctx);
  if (!verdict.ok && intent && fateMayChange(verdict.reason)) {
    verdict = evaluateVoucher(input, contextWithFate(ctx, intent, await findSpendIntentFate(c, intent._id), paymentId));
  }
  if (!verdict.ok) throw ApiError.paymentRejected(verdict.reason);
  if (!intent) throw ApiError.paymentRejected('unknown_spend_intent'); // the rules refuse a missing intent already
  req.timer?.mark('verify_voucher');
  const lostReason: LostReason = (fate) => lostClaimReason(input, ctx, intent, fate, paymentId);

  const doc = paymentDoc(paymentId, req, voucher, now);
  const shards = deps.env.SETTLEMENT_SHARDS;
  const [inserted, queued] = await Promise.allSettled([insertPayment(c, doc), enqueueForSettlement(c, shards, doc, traceparent)]);
  if (queued.status === 'rejected') throw queued.reason;
  req.timer?.mark('claim_voucher');
  if (inserted.status === 'fulfilled') return { doc, lostReason };
  if (!isDuplicateKey(inserted.reason)) throw inserted.reason;
  const holder = await findPaymentByVoucher(c, voucher.voucherId);
  if (holder?._id === paymentId) return { doc: holder, lostReason };
  const [, fate] = await Promise.all([dequeueRefused(c, shards, paymentId), findSpendIntentFate(c, intent._id)]);
  throw ApiError.paymentRejected(lostReason(fate));
}

/**
 * Puts the payment in its settlement shard's queue, then consumes the spend intent (the last
 * check, and the one that makes the payment the borrower's; the shard settles only entries whose
 * intent this payment consumed), then has the workflow started: after the answer when a background
 * finisher is configured, before it otherwise. Enqueuing first means a crash between the two
 * leaves an entry the worker's sweeper decides, never an accepted payment nobody settles.
 */
async function accept(
  deps: PaymentDeps,
  doc: PaymentDoc,
  timer?: PhaseTimer,
  opts: { queued?: boolean; lostReason?: LostReason; traceparent?: string | undefined } = {},
): Promise<Receipt> {
  const c = deps.store.c;
  const shards = deps.env.SETTLEMENT_SHARDS;
  if (!opts.queued) await enqueueForSettlement(c, shards, doc, opts.traceparent);
  timer?.mark('enqueue');
  const consumed = await consumeSpendIntentOrFate(c, doc.spendIntentId, doc.voucherId, doc._id);
  if (consumed !== 'consumed') {
    await Promise.all([dequeueRefused(c, shards, doc._id), deleteUnacceptedPayment(c, doc._id)]);
    throw ApiError.paymentRejected(opts.lostReason?.(consumed) ?? 'voucher_already_used');
  }
  timer?.mark('consume_intent');
  deps.statusCache?.rememberAccepted(doc);
  if (deps.captureFinisher) deps.captureFinisher.submit(doc);
  else await finishCapture({ temporal: deps.temporal, taskQueue: deps.env.TEMPORAL_TASK_QUEUE }, doc);
  return toReceipt({ ...doc, status: 'QUEUED' });
}

function paymentDoc(paymentId: string, req: CaptureRequest, v: Voucher, now: Date): PaymentDoc {
  return {
    _id: paymentId,
    voucherId: v.voucherId,
    spendIntentId: v.spendIntentId,
    merchantId: req.merchantId,
    borrowerId: v.borrowerId,
    operationalAgentId: v.operationalAgentId,
    payTo: v.payTo,
    amount: v.amount,
    asset: v.asset,
    network: v.network,
    orderRef: v.orderRef,
    resource: v.resource,
    idempotencyKey: req.idempotencyKey,
    status: 'CAPTURING',
    capturedAt: now,
    updatedAt: now,
    outcomeIn: 'batch',
  };
}
