import { z } from 'zod';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { canonicalJson } from '@credit-facilitator/wire/canonical';
import { ErrorAnswerSchema, NetworkAnswer, retryAfterSeconds } from '@credit-facilitator/wire/facilitator-answers';
import { CaptureResponseSchema, ReceiptSchema, type Receipt } from '@credit-facilitator/wire/receipt';

/**
 * Pure translation between our facilitator API (docs/api.md) and the shapes @x402/core's
 * resource server expects from a FacilitatorClient. No I/O here: credit-facilitator-client.ts
 * does the HTTP and calls these.
 */

export type { Receipt };

const VerifyOkSchema = z.looseObject({
  isValid: z.boolean(),
  invalidReason: z.string().optional(),
  invalidMessage: z.string().optional(),
  payer: z.string().optional(),
});
const SupportedSchema = z.looseObject({
  kinds: z.array(z.looseObject({ x402Version: z.number().int(), scheme: z.string(), network: NetworkAnswer, extra: z.record(z.string(), z.unknown()).optional() })),
  extensions: z.array(z.unknown()).default([]),
  signers: z.record(z.string(), z.array(z.string())).default({}),
});

/** A facilitator answer the client cannot use: the caller turns it into FacilitatorResponseError (HTTP 502 at the middleware). */
export class UnusableAnswer extends Error {
  override readonly name = 'UnusableAnswer';
}

const CAPTURE_KEY_PREFIX = 'x402-credit-capture:v1\n';

/**
 * The capture Idempotency-Key for a payment: a UUID v4 made from SHA-256 of the voucher's
 * canonical JSON. The middleware gives settle() no request headers, so the agent's own
 * Idempotency-Key cannot reach us; the voucher is what identifies the payment instead. The same
 * PAYMENT-SIGNATURE therefore always captures under the same key, and a retried settle replays.
 */
export function captureIdempotencyKey(paymentPayload: Pick<PaymentPayload, 'payload'>): string {
  const inner = paymentPayload.payload as Record<string, unknown> | undefined;
  const basis = inner && typeof inner.voucher === 'object' && inner.voucher !== null ? inner.voucher : (inner ?? {});
  const b = sha256(utf8ToBytes(CAPTURE_KEY_PREFIX + canonicalJson(basis))).slice(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = bytesToHex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The requirements to send with a payment. The middleware rebuilds requirements on every request,
 * so the paid request carries a fresh `extra.orderRef` (a dynamic field it ignores when matching).
 * The order is the one the voucher was prepared for: pin it, which also keeps the capture body
 * identical when the same PAYMENT-SIGNATURE is sent again.
 */
export function requirementsForPayment(requirements: PaymentRequirements, paymentPayload: PaymentPayload): PaymentRequirements {
  const voucher = (paymentPayload.payload as Record<string, unknown> | undefined)?.voucher as Record<string, unknown> | undefined;
  const orderRef = typeof voucher?.orderRef === 'string' ? voucher.orderRef : paymentPayload.accepted?.extra?.orderRef;
  if (typeof orderRef !== 'string') return requirements;
  return { ...requirements, extra: { ...requirements.extra, orderRef } };
}

export function facilitatorBody(paymentPayload: PaymentPayload, requirements: PaymentRequirements) {
  return { x402Version: paymentPayload.x402Version, paymentPayload, paymentRequirements: requirementsForPayment(requirements, paymentPayload) };
}

function errorOf(json: unknown): { code: string; message?: string; invalidReason?: string } | undefined {
  const e = ErrorAnswerSchema.safeParse(json);
  return e.success ? e.data.error : undefined;
}

/** POST /facilitator/verify → VerifyResponse. A refused request (400/422) is an invalid payment; anything else is unusable. */
export function verifyResponseFrom(status: number, json: unknown): VerifyResponse {
  if (status === 200) {
    const ok = VerifyOkSchema.safeParse(json);
    if (!ok.success) throw new UnusableAnswer('facilitator verify answered 200 without a verify result');
    const v = ok.data;
    return {
      isValid: v.isValid,
      ...(v.invalidReason !== undefined ? { invalidReason: v.invalidReason } : {}),
      ...(v.invalidMessage !== undefined ? { invalidMessage: v.invalidMessage } : {}),
      ...(v.payer !== undefined ? { payer: v.payer } : {}),
    };
  }
  const e = errorOf(json);
  if ((status === 400 || status === 422) && e) {
    return { isValid: false, invalidReason: e.invalidReason ?? e.code.toLowerCase(), ...(e.message ? { invalidMessage: e.message } : {}) };
  }
  throw new UnusableAnswer(`facilitator verify answered ${status}${e ? ` ${e.code}` : ''}`);
}

export type CaptureOutcome =
  | { kind: 'captured'; receipt: Receipt; replayed: boolean }
  | { kind: 'rejected'; reason: string; message?: string }
  | { kind: 'busy'; retryAfterSeconds: number };

/** POST /facilitator/capture → outcome. 401/403/5xx and malformed answers are unusable (a configuration or service problem, not the payment's). */
export function captureOutcomeFrom(status: number, json: unknown, retryAfter: string | null): CaptureOutcome {
  if (status === 200) {
    const ok = CaptureResponseSchema.safeParse(json);
    if (!ok.success) throw new UnusableAnswer('facilitator capture answered 200 without a receipt');
    return { kind: 'captured', receipt: ok.data.receipt, replayed: ok.data.replayed };
  }
  const e = errorOf(json);
  if ((status === 400 || status === 409 || status === 422) && e) {
    return { kind: 'rejected', reason: e.invalidReason ?? e.code.toLowerCase(), ...(e.message ? { message: e.message } : {}) };
  }
  if (status === 429 || status === 503) {
    return { kind: 'busy', retryAfterSeconds: retryAfterSeconds(retryAfter) };
  }
  throw new UnusableAnswer(`facilitator capture answered ${status}${e ? ` ${e.code}` : ''}`);
}

/** GET /facilitator/payments/{id} → receipt, or null when the answer is not one (the caller keeps polling). */
export function receiptFrom(status: number, json: unknown): Receipt | null {
  if (status !== 200) return null;
  const r = ReceiptSchema.safeParse(json);
  return r.success ? r.data : null;
}

function receiptExtra(r: Receipt): Record<string, unknown> {
  return {
    paymentId: r.paymentId,
    status: r.status,
    orderRef: r.orderRef,
    ...(r.batchId ? { batchId: r.batchId } : {}),
    ...(r.blockNumber ? { blockNumber: r.blockNumber } : {}),
    ...(r.confirmedAt ? { confirmedAt: r.confirmedAt } : {}),
  };
}

/** A receipt the merchant accepts: CONFIRMED (waitFor confirmed), or any live status (waitFor captured). */
export function settleSuccess(r: Receipt): SettleResponse {
  return {
    success: true,
    transaction: r.transaction ?? '',
    network: r.network as Network,
    payer: r.payer,
    amount: r.amount,
    extra: receiptExtra(r),
  };
}

export function settleFailure(network: Network, errorReason: string, errorMessage?: string, r?: Receipt): SettleResponse {
  return {
    success: false,
    errorReason,
    ...(errorMessage ? { errorMessage } : {}),
    transaction: r?.transaction ?? '',
    network: (r?.network ?? network) as Network,
    ...(r ? { payer: r.payer, amount: r.amount, extra: receiptExtra(r) } : {}),
  };
}

/** A status the payment never leaves: waiting for settlement stops there. */
export function isFinalStatus(status: Receipt['status']): boolean {
  return status === 'CONFIRMED' || status === 'FAILED' || status === 'VOIDED';
}

/** What settle() answers for the last receipt seen while waiting for CONFIRMED. */
export function settleFromFinalReceipt(r: Receipt, waitedMs: number): SettleResponse {
  if (r.status === 'CONFIRMED') return settleSuccess(r);
  if (r.status === 'FAILED') return settleFailure(r.network as Network, 'settlement_failed', r.failureReason ?? 'the settlement batch failed', r);
  if (r.status === 'VOIDED') return settleFailure(r.network as Network, 'payment_voided', `payment ${r.paymentId} was voided by the merchant`, r);
  return settleFailure(
    r.network as Network,
    'settlement_timeout',
    `payment ${r.paymentId} was still ${r.status} after ${waitedMs} ms; it may yet confirm (GET /facilitator/payments/${r.paymentId})`,
    r,
  );
}

/** GET /facilitator/supported → SupportedResponse (our extensions list is always strings or empty). */
export function supportedFrom(status: number, json: unknown): SupportedResponse {
  if (status !== 200) throw new UnusableAnswer(`facilitator supported answered ${status}`);
  const s = SupportedSchema.safeParse(json);
  if (!s.success) throw new UnusableAnswer('facilitator supported answered an unexpected shape');
  return {
    kinds: s.data.kinds.map((k) => ({ x402Version: k.x402Version, scheme: k.scheme, network: k.network as Network, ...(k.extra ? { extra: k.extra } : {}) })),
    extensions: s.data.extensions.filter((e): e is string => typeof e === 'string'),
    signers: s.data.signers,
  };
}
