import { z } from 'zod';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { canonicalJson } from '@credit-facilitator/wire/canonical';
import { signedCreditPayload } from '@credit-facilitator/wire/credit-envelope';
import { parseVoucher, VOUCHER_SIGNING_PREFIX, type Voucher } from '@credit-facilitator/wire/voucher';
import type { PaymentRequiredMessage, Requirements } from './x402-messages.js';

/** prepare_x402_payment's structured output (docs/agent-side.md). */
export const PreparedPaymentSchema = z.looseObject({
  spend_intent_id: z.string().min(1),
  idempotency_key: z.uuid({ version: 'v4' }),
  voucher: z.record(z.string(), z.unknown()),
  signing_input: z.string().min(1),
  payment_requirements: z.record(z.string(), z.unknown()),
  expires_at: z.union([z.string(), z.number()]),
  reused: z.boolean().optional(),
});
export type PreparedPayment = z.infer<typeof PreparedPaymentSchema>;

/** What the agent means to pay: the merchant's 402 and the entry it chose, plus its own limits. */
export interface PaymentIntent {
  paymentRequired: PaymentRequiredMessage;
  accepted: Requirements;
  /** Refuse anything above this (base units), whatever the service would allow. */
  maxAmount?: string;
  operationalAgentId?: string;
  nowSeconds?: number;
}

export type VoucherCheckCode =
  | 'malformed_prepared_payment'
  | 'invalid_voucher'
  | 'unsupported_scheme'
  | 'amount_mismatch'
  | 'amount_over_limit'
  | 'recipient_mismatch'
  | 'asset_mismatch'
  | 'network_mismatch'
  | 'merchant_mismatch'
  | 'order_mismatch'
  | 'resource_mismatch'
  | 'requirements_mismatch'
  | 'spend_intent_mismatch'
  | 'agent_mismatch'
  | 'voucher_expired'
  | 'signing_input_mismatch';

/** The agent refused to sign: what the service prepared is not what the agent set out to pay. */
export class VoucherCheckError extends Error {
  override readonly name = 'VoucherCheckError';
  constructor(
    readonly code: VoucherCheckCode,
    message: string,
  ) {
    super(message);
  }
}

export interface SignedPayment {
  /** The PAYMENT-SIGNATURE header value. */
  paymentSignature: string;
  /** Send as Idempotency-Key with the paid request. */
  idempotencyKey: string;
  spendIntentId: string;
  voucher: Voucher;
  paymentPayload: ReturnType<typeof signedCreditPayload>;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function fail(code: VoucherCheckCode, message: string): never {
  throw new VoucherCheckError(code, message);
}

/**
 * Everything the agent checks before its workload key touches a voucher. The service prepares
 * the voucher, but the agent signs it, so the agent re-derives every term from the merchant's own
 * 402 and refuses a signing_input it cannot reproduce: it never signs an opaque string.
 */
export function checkPreparedPayment(prepared: unknown, intent: PaymentIntent): { prepared: PreparedPayment; voucher: Voucher } {
  const p = PreparedPaymentSchema.safeParse(prepared);
  if (!p.success) fail('malformed_prepared_payment', `prepare_x402_payment output: ${p.error.issues[0]?.message ?? 'invalid'}`);
  const parsed = parseVoucher(p.data.voucher);
  if (!parsed.ok) fail('invalid_voucher', parsed.detail);
  const v = parsed.voucher;
  const a = intent.accepted;
  const extra = a.extra ?? {};

  if (a.scheme !== 'credit') fail('unsupported_scheme', `the chosen offer is "${a.scheme}", not "credit"`);
  if (v.amount !== a.amount) fail('amount_mismatch', `voucher amount ${v.amount} is not the price ${a.amount}`);
  if (intent.maxAmount !== undefined && BigInt(v.amount) > BigInt(intent.maxAmount)) {
    fail('amount_over_limit', `voucher amount ${v.amount} is above the agent's limit ${intent.maxAmount}`);
  }
  if (!same(v.payTo, a.payTo)) fail('recipient_mismatch', 'voucher payTo is not the merchant\'s payTo');
  if (!same(v.asset, a.asset)) fail('asset_mismatch', 'voucher asset is not the offered asset');
  if (v.network !== a.network) fail('network_mismatch', 'voucher network is not the offered network');
  if (typeof extra.merchantId !== 'string' || !same(v.merchantId, extra.merchantId)) {
    fail('merchant_mismatch', 'voucher merchantId is not the offer\'s extra.merchantId');
  }
  if (typeof extra.orderRef === 'string' && v.orderRef !== extra.orderRef) fail('order_mismatch', 'voucher orderRef is not the offer\'s');
  if (v.resource !== intent.paymentRequired.resource.url) fail('resource_mismatch', 'voucher resource is not the resource the merchant priced');

  const echoed = p.data.payment_requirements;
  const echoMatches =
    echoed.scheme === a.scheme &&
    echoed.network === a.network &&
    echoed.amount === a.amount &&
    typeof echoed.asset === 'string' && same(echoed.asset, a.asset) &&
    typeof echoed.payTo === 'string' && same(echoed.payTo, a.payTo);
  if (!echoMatches) fail('requirements_mismatch', 'payment_requirements is not the offer the agent chose');
  if (!same(p.data.spend_intent_id, v.spendIntentId)) fail('spend_intent_mismatch', 'spend_intent_id is not the voucher\'s');
  if (intent.operationalAgentId !== undefined && !same(v.operationalAgentId, intent.operationalAgentId)) {
    fail('agent_mismatch', 'voucher is for another operational agent');
  }
  const now = intent.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (v.expiresAt <= now) fail('voucher_expired', 'voucher has expired');

  if (p.data.signing_input !== VOUCHER_SIGNING_PREFIX + canonicalJson(v)) {
    fail('signing_input_mismatch', 'signing_input is not the canonical signing string of the voucher');
  }
  return { prepared: p.data, voucher: v };
}

/** Checks, then signs with the workload key and builds the PAYMENT-SIGNATURE header value. */
export function signPreparedPayment(prepared: unknown, intent: PaymentIntent, privateKey: Uint8Array): SignedPayment {
  const checked = checkPreparedPayment(prepared, intent);
  const paymentPayload = signedCreditPayload(checked.voucher, privateKey, {
    ...intent.accepted,
    extra: intent.accepted.extra ?? {},
  });
  return {
    paymentSignature: encodePaymentSignatureHeader(paymentPayload as unknown as PaymentPayload),
    idempotencyKey: checked.prepared.idempotency_key,
    spendIntentId: checked.prepared.spend_intent_id,
    voucher: checked.voucher,
    paymentPayload,
  };
}
