import type { PrepareX402Args } from './tool-types.js';
import { signPreparedPayment } from './voucher-signer.js';
import { creditOffer, parsePaymentRequiredHeader, parsePaymentResponseHeader, type SettleResponseMessage } from './x402-messages.js';

export interface PayDeps {
  /** prepare_x402_payment (the MCP tool, or anything with its contract). */
  prepare: (args: PrepareX402Args) => Promise<unknown>;
  privateKey: Uint8Array;
  operationalAgentId?: string;
  /** orderRef -> the idempotency key its payment was sent with (the service keeps one per open order). */
  orderKeys: Map<string, string>;
  fetch?: typeof fetch;
}

export interface PayOptions {
  /** Refuse to pay more than this (base units). */
  maxAmount?: string;
  /** How long to keep re-sending the paid request while the merchant answers 202 (settlement pending). */
  waitForDeliveryMs?: number;
}

export interface PaidResponse {
  response: Response;
  /** False when the first answer was not a 402. */
  paid: boolean;
  paymentResponse: SettleResponseMessage | null;
  paymentId?: string;
  orderRef?: string;
  idempotencyKey?: string;
  spendIntentId?: string;
}

export class PaymentFlowError extends Error {
  override readonly name = 'PaymentFlowError';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * fetch with x402 credit payments: on a 402, prepare the voucher through the service, check it
 * against the merchant's own offer, sign it locally and resend with PAYMENT-SIGNATURE.
 */
export async function payFetch(deps: PayDeps, input: string | URL, init: RequestInit = {}, opts: PayOptions = {}): Promise<PaidResponse> {
  const doFetch = deps.fetch ?? fetch;
  const url = new URL(input);
  const first = await doFetch(url, init);
  if (first.status !== 402) return { response: first, paid: false, paymentResponse: null };
  const header = first.headers.get('payment-required');
  await first.body?.cancel();
  if (!header) throw new PaymentFlowError('the merchant answered 402 without a PAYMENT-REQUIRED header');
  const required = parsePaymentRequiredHeader(header);
  if (new URL(required.resource.url).origin !== url.origin) {
    throw new PaymentFlowError('the 402 prices a resource on another origin than the one requested');
  }
  const offer = creditOffer(required);
  if (!offer) throw new PaymentFlowError('the merchant does not accept the credit scheme');
  const orderRef = typeof offer.extra.orderRef === 'string' ? offer.extra.orderRef : undefined;

  const prepared = await deps.prepare({
    payment_required: header,
    ...(orderRef !== undefined ? { order_ref: orderRef } : {}),
    ...(deps.operationalAgentId ? { operational_agent_id: deps.operationalAgentId } : {}),
    // No idempotency_key: the service returns the same spend intent and key for an open order_ref,
    // and a re-sent key with a different 402 text (say, after a rejection) would be a conflict.
  });
  const signed = signPreparedPayment(
    prepared,
    {
      paymentRequired: required,
      accepted: offer,
      ...(opts.maxAmount !== undefined ? { maxAmount: opts.maxAmount } : {}),
      ...(deps.operationalAgentId ? { operationalAgentId: deps.operationalAgentId } : {}),
    },
    deps.privateKey,
  );
  deps.orderKeys.set(signed.voucher.orderRef, signed.idempotencyKey);

  const headers = new Headers(init.headers);
  headers.set('PAYMENT-SIGNATURE', signed.paymentSignature);
  headers.set('Idempotency-Key', signed.idempotencyKey);
  const paidInit: RequestInit = { ...init, headers };
  const deadline = Date.now() + (opts.waitForDeliveryMs ?? 60_000);
  let res = await doFetch(url, paidInit);
  while (res.status === 202 && Date.now() < deadline) {
    const retryAfter = Number(res.headers.get('retry-after'));
    await res.body?.cancel();
    await sleep(Math.min(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 1000, Math.max(0, deadline - Date.now())));
    res = await doFetch(url, paidInit);
  }

  const paymentResponse = parsePaymentResponseHeader(res.headers.get('payment-response'));
  let paymentId = typeof paymentResponse?.extra?.paymentId === 'string' ? paymentResponse.extra.paymentId : undefined;
  if (paymentId === undefined && res.status === 202) {
    const body = (await res.clone().json().catch(() => null)) as { paymentId?: unknown } | null;
    if (typeof body?.paymentId === 'string') paymentId = body.paymentId;
  }
  return {
    response: res,
    paid: true,
    paymentResponse,
    ...(paymentId !== undefined ? { paymentId } : {}),
    orderRef: signed.voucher.orderRef,
    idempotencyKey: signed.idempotencyKey,
    spendIntentId: signed.spendIntentId,
  };
}
