import { encodePaymentSignatureHeader } from '@x402/core/http';
import { parseAbiItem } from 'viem';
import { randomUUID } from 'node:crypto';
import type { PreparedPayment, PrepareOptions } from '../../src/agents/prepare-payment.js';
import { signedCreditPayload } from '@credit-facilitator/wire/credit-envelope';
import { decodePrivateKey, encodeKey, publicKeyFromPrivate, type Voucher } from '@credit-facilitator/wire/voucher';
import { getStack } from '../support/stack.js';
import { readJsonResponse, type JsonResponse } from '../support/http.js';
import { connectWorld, type World } from '../../tools/harness/world.js';
import type { ProvisionedMerchant } from '../../tools/harness/merchants.js';
import { onboardBorrower, type OnboardedBorrower, type OnboardOptions } from '../../tools/harness/onboarding.js';
import { prepareAndSign, prepareAndSignRequired, type SignedPayment } from '../../tools/harness/signed-payment.js';

export { closeWorld, connectWorld, type World } from '../../tools/harness/world.js';
export { newMerchant, UNTHROTTLED } from '../../tools/harness/merchants.js';

let cached: Promise<World> | null = null;

/** The test stack plus clients to look behind the API (stays open for the whole run). */
export function world(): Promise<World> {
  cached ??= getStack().then((stack) => connectWorld(stack.env));
  return cached;
}

export type TestMerchant = ProvisionedMerchant;

/** A borrower onboarded through the real agent flow, ACTIVE with one granted agent key. */
export type TestBorrower = OnboardedBorrower;

/**
 * Grant limits far above any merchant-path amount, so the agent policy never refuses a test
 * payment by accident (the credit line, DEFAULT_CREDIT_LIMIT, stays the binding limit).
 */
export const GENEROUS_GRANT = { perPaymentLimit: '1000000000', dailyLimit: '1000000000000' } as const;

/** Sign-in, register, facility, agent grant and handle, through the real services and workflow. */
export async function newBorrower(w: World, opts: OnboardOptions = {}): Promise<TestBorrower> {
  return onboardBorrower(w, { ...GENEROUS_GRANT, ...opts });
}

/** The x402 v2 PaymentPayload that carries a signed credit voucher. */
export type CreditPaymentPayload = ReturnType<typeof signedCreditPayload>;

export interface TestVoucher {
  prepared: PreparedPayment;
  /** The Idempotency-Key prepare_x402_payment issued for this order. */
  idempotencyKey: string;
  agentPublicKey: string;
  paymentPayload: CreditPaymentPayload;
  /** The PAYMENT-SIGNATURE header value. */
  paymentSignatureHeader: string;
  captureBody: { x402Version: 2; paymentPayload: CreditPaymentPayload };
}

function testVoucher(signed: SignedPayment, b: Pick<TestBorrower, 'agentPrivateKey'>): TestVoucher {
  const paymentPayload = signed.body.paymentPayload as unknown as CreditPaymentPayload;
  return {
    prepared: signed.prepared,
    idempotencyKey: signed.idempotencyKey,
    agentPublicKey: encodeKey(publicKeyFromPrivate(decodePrivateKey(b.agentPrivateKey) as Uint8Array)),
    paymentPayload,
    paymentSignatureHeader: encodePaymentSignatureHeader(paymentPayload as never),
    captureBody: { x402Version: 2, paymentPayload },
  };
}

/** prepare_x402_payment for `amount` to merchant `m`, signed with the borrower's agent key. */
export async function newVoucher(
  w: World,
  m: TestMerchant,
  b: TestBorrower,
  amount: string,
  extra: { orderRef?: string; ttlSeconds?: number } = {},
): Promise<TestVoucher> {
  const opts: PrepareOptions = extra.ttlSeconds === undefined ? {} : { ttlSeconds: extra.ttlSeconds };
  return testVoucher(await prepareAndSign(w, b, m, amount, extra.orderRef, opts), b);
}

/** As newVoucher, for a merchant's own PAYMENT-REQUIRED header (its resource and order ref). */
export async function voucherFor402(w: World, b: TestBorrower, paymentRequired: string, orderRef?: string): Promise<TestVoucher> {
  return testVoucher(await prepareAndSignRequired(w, b, paymentRequired, orderRef), b);
}

/**
 * A voucher prepare_x402_payment would never issue (expired, another network, another amount...):
 * the real prepared voucher with `tamper` applied, re-signed with the borrower's own agent key (or
 * `key`), and requirements that echo its terms. The borrower and spend intent stay real.
 */
export function tamperedPayload(
  real: TestVoucher,
  b: Pick<TestBorrower, 'agentPrivateKey'>,
  tamper: (v: Voucher) => Voucher = (v) => v,
  key: Uint8Array = decodePrivateKey(b.agentPrivateKey) as Uint8Array,
): CreditPaymentPayload {
  const v = tamper(real.prepared.voucher);
  return signedCreditPayload(v, key, { ...real.paymentPayload.accepted, network: v.network, asset: v.asset, amount: v.amount, payTo: v.payTo });
}

export type ApiResponse = JsonResponse;

export async function call(
  w: World,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; idempotencyKey?: string; signal?: AbortSignal } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined && method !== 'GET' && method !== 'HEAD') {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  return readJsonResponse(await fetch(`${w.baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}), ...(opts.signal ? { signal: opts.signal } : {}) }));
}

export function capture(w: World, m: TestMerchant, body: unknown, idempotencyKey: string = randomUUID()) {
  return call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body, idempotencyKey });
}

export async function pollUntil(w: World, m: TestMerchant, paymentId: string, status: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last: ApiResponse | null = null;
  while (Date.now() < deadline) {
    last = await call(w, 'GET', `/facilitator/payments/${paymentId}`, { token: m.apiKey });
    if (last.status === 200 && last.json.status === status) return last.json;
    if (last.status === 200 && (last.json.status === 'FAILED' || last.json.status === 'CONFIRMED') && last.json.status !== status) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`payment ${paymentId} did not reach ${status}: last ${JSON.stringify(last?.json)}`);
}

export const paymentSettledEvent = parseAbiItem(
  'event PaymentSettled(bytes32 indexed paymentId, bytes32 indexed borrowerId, bytes32 indexed merchantId, uint256 amount)',
);

export const erc20BalanceOf = parseAbiItem('function balanceOf(address) view returns (uint256)');
