import assert from 'node:assert/strict';
import { x402Client } from '@x402/core/client';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import type { PrepareX402Args } from '@credit-facilitator/agent-client/tool-types';
import { CreditSchemeClient } from '@credit-facilitator/agent-client/x402-scheme-client';
import { canonicalJson } from '@credit-facilitator/wire/canonical';
import { generateAgentKeyPair, VOUCHER_SIGNING_PREFIX, verifyVoucherSignature, type Voucher } from '@credit-facilitator/wire/voucher';
import { sampleVoucher, SAMPLE } from '@credit-facilitator/wire/testing';

const NETWORK = 'eip155:84532' as const;
const NOW_MS = 1_700_000_100_000;

function required(orderRef = 'order-42'): PaymentRequired {
  return {
    x402Version: 2,
    resource: { url: 'https://merchant.example/report/42', description: '', mimeType: '' },
    accepts: [
      {
        scheme: 'credit',
        network: NETWORK,
        asset: SAMPLE.asset,
        amount: '1500000',
        payTo: SAMPLE.payTo,
        maxTimeoutSeconds: 300,
        extra: { merchantId: SAMPLE.merchantId, orderRef },
      },
    ],
  };
}

/** prepare_x402_payment's answer for a voucher, as the service builds it. */
function prepared(v: Voucher, patch: Record<string, unknown> = {}) {
  return {
    spend_intent_id: v.spendIntentId,
    idempotency_key: '6f1c1d0e-5b7a-4c39-9d2e-3a4b5c6d7e8f',
    voucher: v,
    signing_input: VOUCHER_SIGNING_PREFIX + canonicalJson(v),
    payment_requirements: required().accepts[0],
    expires_at: new Date(v.expiresAt * 1000).toISOString(),
    ...patch,
  };
}

describe('x402-interop: the credit scheme client plug-in', () => {
  const keys = generateAgentKeyPair();

  function clientWith(answer: (args: PrepareX402Args) => unknown, maxAmount?: string) {
    const calls: PrepareX402Args[] = [];
    const scheme = new CreditSchemeClient({
      prepare: async (args) => {
        calls.push(args);
        return answer(args);
      },
      privateKey: keys.privateKey,
      operationalAgentId: SAMPLE.operationalAgentId,
      now: () => NOW_MS,
      ...(maxAmount ? { maxAmount } : {}),
    });
    const client = new x402Client().register('eip155:*', scheme).setSpendControls(false);
    return { scheme, client, calls };
  }

  describe('CreditSchemeClient through the stock x402Client', () => {
    it('prepares with the chosen offer and its order, checks, signs locally and returns the credit envelope', async () => {
      const { client, calls, scheme } = clientWith(() => prepared(sampleVoucher()));
      const payload = await client.createPaymentPayload(required());
      assert.equal(calls.length, 1);
      assert.equal(calls[0]!.order_ref, 'order-42');
      assert.equal(calls[0]!.operational_agent_id, SAMPLE.operationalAgentId);
      assert.deepEqual((calls[0]!.payment_required as unknown as PaymentRequired).accepts, required().accepts);
      assert.equal(payload.x402Version, 2);
      assert.deepEqual(payload.accepted, required().accepts[0]);
      const inner = payload.payload as { voucher: Voucher; signature: string };
      assert.deepEqual(Object.keys(inner).sort(), ['signature', 'voucher']);
      assert.equal(verifyVoucherSignature(inner.voucher, inner.signature, keys.publicKey), true);
      assert.equal(scheme.idempotencyKeyFor(inner.voucher.voucherId), '6f1c1d0e-5b7a-4c39-9d2e-3a4b5c6d7e8f');
    });

    it('never signs what it cannot reproduce: another amount, another merchant, a foreign signing string', async () => {
      const cases: [string, unknown][] = [
        ['amount_mismatch', prepared(sampleVoucher({ amount: '1500001' }))],
        ['merchant_mismatch', prepared(sampleVoucher({ merchantId: '66666666-6666-4666-8666-666666666666' }))],
        ['signing_input_mismatch', prepared(sampleVoucher(), { signing_input: 'sign me, I am harmless' })],
        ['resource_mismatch', prepared(sampleVoucher({ resource: 'https://elsewhere.example/' }))],
      ];
      for (const [code, answer] of cases) {
        const { client } = clientWith(() => answer);
        await assert.rejects(client.createPaymentPayload(required()), (e: unknown) => (e as { code?: string }).code === code, code);
      }
    });

    it('honours its own cap and the x402Client spend cap, whichever is lower', async () => {
      const own = clientWith(() => prepared(sampleVoucher()), '1000000');
      await assert.rejects(own.client.createPaymentPayload(required()), (e: unknown) => (e as { code?: string }).code === 'amount_over_limit');
      const capped = clientWith(() => prepared(sampleVoucher()));
      capped.client.setSpendControls({ allowedAssets: [{ network: NETWORK, asset: SAMPLE.asset, maxAmountPerPayment: '1500000' }] });
      await capped.client.createPaymentPayload(required());
    });

    it('refuses to be called without the 402 (outside x402Client)', async () => {
      const { scheme } = clientWith(() => prepared(sampleVoucher()));
      await assert.rejects(scheme.createPaymentPayload(2, required().accepts[0]!), /no PaymentRequired/);
    });

    it('adds the prepared Idempotency-Key to the paid request only', async () => {
      const { client, scheme } = clientWith(() => prepared(sampleVoucher()));
      const payload = await client.createPaymentPayload(required());
      const seen: Request[] = [];
      const inner: typeof fetch = async (input) => {
        seen.push(input as Request);
        return new Response('ok');
      };
      const wrapped = scheme.withIdempotencyKey(inner);
      await wrapped('http://127.0.0.1:9/x');
      await wrapped('http://127.0.0.1:9/x', { headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) } });
      await wrapped('http://127.0.0.1:9/x', { headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload), 'Idempotency-Key': 'mine' } });
      assert.equal(seen[0]!.headers.get('idempotency-key'), null);
      assert.equal(seen[1]!.headers.get('idempotency-key'), '6f1c1d0e-5b7a-4c39-9d2e-3a4b5c6d7e8f');
      assert.equal(seen[2]!.headers.get('idempotency-key'), 'mine');
    });
  });
});
