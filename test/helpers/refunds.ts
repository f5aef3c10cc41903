import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { receiveWithAuthorizationTypes } from '../../src/domain/typed-data.js';
import { call, type TestMerchant, type World } from './world.js';

type TypedData = {
  domain: { name: string; version: string; chainId: number; verifyingContract: Hex };
  message: { from: Hex; to: Hex; value: string; validAfter: string; validBefore: string; nonce: Hex };
};

/** What a merchant does: ask for the typed data, sign it with the payout wallet. */
export async function signedRefund(w: World, m: TestMerchant, paymentId: string, amount: string, signer: Hex = m.payoutKey) {
  const prepared = await call(w, 'GET', `/facilitator/payments/${paymentId}/refund-authorization?amount=${amount}`, { token: m.apiKey });
  assert.equal(prepared.status, 200, JSON.stringify(prepared.json));
  const td = prepared.json.typedData as TypedData;
  const msg = td.message;
  const signature = await privateKeyToAccount(signer).signTypedData({
    domain: td.domain,
    types: receiveWithAuthorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message: { ...msg, value: BigInt(msg.value), validAfter: BigInt(msg.validAfter), validBefore: BigInt(msg.validBefore) },
  });
  return { amount, authorization: msg, signature };
}

export const refund = (w: World, m: TestMerchant, paymentId: string, body: unknown, key = randomUUID()) =>
  call(w, 'POST', `/facilitator/payments/${paymentId}/refunds`, { token: m.apiKey, body, idempotencyKey: key });

export async function refundUntil(w: World, m: TestMerchant, paymentId: string, refundId: string, status: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const r = await call(w, 'GET', `/facilitator/payments/${paymentId}`, { token: m.apiKey });
    const found = (r.json.refunds as { refundId: string; status: string }[] | undefined)?.find((x) => x.refundId === refundId);
    last = r.json;
    if (found?.status === status) return r.json;
    if (found?.status === 'FAILED' && status !== 'FAILED') break;
    await new Promise((res) => setTimeout(res, 300));
  }
  throw new Error(`refund ${refundId} did not reach ${status}: ${JSON.stringify(last)}`);
}

