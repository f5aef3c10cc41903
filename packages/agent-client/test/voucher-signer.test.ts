import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { canonicalJson } from '@credit-facilitator/wire/canonical';
import { generateAgentKeyPair, VOUCHER_SIGNING_PREFIX, verifyVoucherSignature, type Voucher } from '@credit-facilitator/wire/voucher';
import { checkPreparedPayment, signPreparedPayment, VoucherCheckError, type PaymentIntent } from '@credit-facilitator/agent-client/voucher-signer';
import type { PaymentRequiredMessage } from '@credit-facilitator/agent-client/x402-messages';
import { sampleVoucher, SAMPLE } from '@credit-facilitator/wire/testing';

const NOW = 1_700_000_100;

function offer(): { required: PaymentRequiredMessage; intent: PaymentIntent } {
  const accepted = {
    scheme: 'credit',
    network: 'eip155:84532',
    asset: SAMPLE.asset,
    amount: '1500000',
    payTo: SAMPLE.payTo,
    maxTimeoutSeconds: 300,
    extra: { merchantId: SAMPLE.merchantId, orderRef: 'order-42', facilitator: 'http://127.0.0.1:8402/api/v1' },
  };
  const required: PaymentRequiredMessage = {
    x402Version: 2,
    error: 'payment required',
    resource: { url: 'https://merchant.example/report/42', description: 'report', mimeType: 'application/json' },
    accepts: [accepted],
  };
  return { required, intent: { paymentRequired: required, accepted, nowSeconds: NOW } };
}

function prepared(v: Voucher = sampleVoucher(), patch: Record<string, unknown> = {}) {
  return {
    spend_intent_id: v.spendIntentId,
    idempotency_key: '6f1c1d0e-5b7a-4c39-9d2e-3a4b5c6d7e8f',
    voucher: v,
    signing_input: VOUCHER_SIGNING_PREFIX + canonicalJson(v),
    payment_requirements: { ...offer().intent.accepted },
    expires_at: new Date(v.expiresAt * 1000).toISOString(),
    reused: false,
    ...patch,
  };
}

function refusal(p: unknown, intent: PaymentIntent = offer().intent): string {
  try {
    checkPreparedPayment(p, intent);
  } catch (err) {
    assert.ok(err instanceof VoucherCheckError, String(err));
    return err.code;
  }
  assert.fail('the signer accepted a voucher it should refuse');
}

describe('agent-client/voucher-signer', () => {
  const keys = generateAgentKeyPair();

  it('signs a voucher that matches the offer; the signature verifies and the header decodes to the envelope', () => {
    const { intent } = offer();
    const signed = signPreparedPayment(prepared(), intent, keys.privateKey);
    assert.equal(signed.idempotencyKey, '6f1c1d0e-5b7a-4c39-9d2e-3a4b5c6d7e8f');
    const payload = decodePaymentSignatureHeader(signed.paymentSignature) as unknown as {
      x402Version: number;
      accepted: Record<string, unknown>;
      payload: { voucher: Voucher; signature: string };
    };
    assert.equal(payload.x402Version, 2);
    assert.deepEqual(payload.accepted, intent.accepted);
    assert.deepEqual(payload.payload.voucher, sampleVoucher());
    assert.equal(verifyVoucherSignature(payload.payload.voucher, payload.payload.signature, keys.publicKey), true);
    assert.equal(verifyVoucherSignature(payload.payload.voucher, payload.payload.signature, generateAgentKeyPair().publicKey), false);
  });

  it('refuses a voucher for another amount than the price', () => {
    assert.equal(refusal(prepared(sampleVoucher({ amount: '1500001' }))), 'amount_mismatch');
  });

  it('refuses a voucher that pays someone other than the merchant', () => {
    assert.equal(refusal(prepared(sampleVoucher({ payTo: '0x00000000000000000000000000000000000000cc' }))), 'recipient_mismatch');
  });

  it('refuses a voucher for another merchant, asset, network, order or resource', () => {
    assert.equal(refusal(prepared(sampleVoucher({ merchantId: randomUUID() }))), 'merchant_mismatch');
    assert.equal(refusal(prepared(sampleVoucher({ asset: '0x00000000000000000000000000000000000000dd' }))), 'asset_mismatch');
    assert.equal(refusal(prepared(sampleVoucher({ network: 'eip155:8453' }))), 'network_mismatch');
    assert.equal(refusal(prepared(sampleVoucher({ orderRef: 'order-43' }))), 'order_mismatch');
    assert.equal(refusal(prepared(sampleVoucher({ resource: 'https://merchant.example/report/43' }))), 'resource_mismatch');
  });

  it('refuses a signing_input that is not the canonical string of the voucher', () => {
    const v = sampleVoucher();
    const other = sampleVoucher({ amount: '9999999' });
    assert.equal(refusal(prepared(v, { signing_input: VOUCHER_SIGNING_PREFIX + canonicalJson(other) })), 'signing_input_mismatch');
    assert.equal(refusal(prepared(v, { signing_input: canonicalJson(v) })), 'signing_input_mismatch');
    assert.equal(refusal(prepared(v, { signing_input: Buffer.from(VOUCHER_SIGNING_PREFIX + canonicalJson(v)).toString('base64') })), 'signing_input_mismatch');
  });

  it('refuses echoed requirements that differ from the chosen offer, and a mismatched spend intent id', () => {
    const p = prepared();
    assert.equal(refusal({ ...p, payment_requirements: { ...p.payment_requirements, amount: '1' } }), 'requirements_mismatch');
    assert.equal(refusal({ ...p, spend_intent_id: randomUUID() }), 'spend_intent_mismatch');
  });

  it("enforces the agent's own cap, terminal and the voucher's expiry", () => {
    const { intent } = offer();
    assert.equal(refusal(prepared(), { ...intent, maxAmount: '1499999' }), 'amount_over_limit');
    assert.doesNotThrow(() => checkPreparedPayment(prepared(), { ...intent, maxAmount: '1500000' }));
    assert.equal(refusal(prepared(), { ...intent, operationalAgentId: randomUUID() }), 'agent_mismatch');
    assert.equal(refusal(prepared(), { ...intent, nowSeconds: sampleVoucher().expiresAt }), 'voucher_expired');
  });

  it('refuses malformed output: a non-normal voucher or a missing idempotency key', () => {
    const upper = { ...sampleVoucher(), payTo: SAMPLE.payTo.toUpperCase().replace('0X', '0x') };
    assert.equal(refusal(prepared(sampleVoucher(), { voucher: upper })), 'invalid_voucher');
    const { idempotency_key: _drop, ...noKey } = prepared();
    assert.equal(refusal(noKey), 'malformed_prepared_payment');
  });
});
