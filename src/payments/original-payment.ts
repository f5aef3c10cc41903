import { parseCreditPayload } from '@credit-facilitator/wire/envelope';
import { ApiError } from '../domain/errors.js';
import type { Collections } from '../store/collections.js';
import { findPayment, findPaymentByVoucher } from '../store/payments.js';
import { findSpendIntentFate } from '../store/spend-intents.js';

/**
 * The payment that already used this voucher (or its spend intent), when it is the caller's and not
 * `ownPaymentId`: what a merchant told voucher_already_used polls instead. Another merchant's
 * payment is never named.
 */
export async function originalPaymentId(
  c: Collections,
  merchantId: string,
  voucher: { voucherId: string; spendIntentId: string },
  ownPaymentId?: string,
): Promise<string | undefined> {
  const [fate, byVoucher] = await Promise.all([findSpendIntentFate(c, voucher.spendIntentId), findPaymentByVoucher(c, voucher.voucherId)]);
  const id = fate?.fate === 'CONSUMED' && fate.paymentId ? fate.paymentId : byVoucher?._id;
  if (!id || id === ownPaymentId) return undefined;
  const payment = id === byVoucher?._id ? byVoucher : await findPayment(c, id);
  return payment?.merchantId === merchantId ? id : undefined;
}

/** A voucher_already_used rejection, named with the original payment when there is one to poll; any other error as it is. */
export async function withOriginalPayment(
  c: Collections,
  err: unknown,
  merchantId: string,
  body: { x402Version: number; paymentPayload: Record<string, unknown> },
  ownPaymentId?: string,
): Promise<unknown> {
  if (!(err instanceof ApiError) || err.extra?.invalidReason !== 'voucher_already_used' || err.extra.paymentId) return err;
  const parsed = parseCreditPayload(body.x402Version, body.paymentPayload);
  if (!parsed.ok) return err;
  const paymentId = await originalPaymentId(c, merchantId, parsed.voucher, ownPaymentId).catch(() => undefined);
  if (!paymentId) return err;
  const payer = typeof err.extra.payer === 'string' ? err.extra.payer : undefined;
  return ApiError.paymentRejected('voucher_already_used', payer, paymentId);
}
