import assert from 'node:assert/strict';
import {
  RequestShapeSchema,
  VerifyRequestShapeSchema,
  fieldIssues,
  isV1PaymentIntent,
  parseCreditPayload,
  parsePaymentRequirements,
} from '@credit-facilitator/wire/envelope';
import { generateAgentKeyPair, signVoucher, type Voucher } from '@credit-facilitator/wire/voucher';
import { sampleVoucher } from '@credit-facilitator/wire/testing';

const voucher = (): Voucher => sampleVoucher();

const keys = generateAgentKeyPair();
const accepted = () => ({
  scheme: 'credit',
  network: 'eip155:84532',
  asset: '0x00000000000000000000000000000000000000bb',
  amount: '1500000',
  payTo: '0x00000000000000000000000000000000000000aa',
  maxTimeoutSeconds: 300,
  extra: { settlement: 'batch' },
});
const envelope = (): Record<string, unknown> => {
  const v = voucher();
  return { x402Version: 2, accepted: accepted(), payload: { voucher: v, signature: signVoucher(v, keys.privateKey) } };
};

function reasonOf(r: ReturnType<typeof parseCreditPayload>): string {
  return r.ok ? 'ok' : r.reason;
}

describe('domain/envelope', () => {
  describe('isV1PaymentIntent', () => {
    it('spots a PaymentIntent at the top, in the payment payload, or in its payload', () => {
      assert.equal(isV1PaymentIntent({ x402Version: 1, paymentIntent: { amount: '1' } }), true);
      assert.equal(isV1PaymentIntent({ paymentPayload: { intent: { id: 'x' } } }), true);
      assert.equal(isV1PaymentIntent({ paymentPayload: { paymentIntent: {} } }), true);
      assert.equal(isV1PaymentIntent({ paymentPayload: { type: 'PaymentIntent' } }), true);
      assert.equal(isV1PaymentIntent({ x402Version: 7, paymentPayload: { payload: { type: 'PaymentIntent' } } }), true);
      assert.equal(isV1PaymentIntent({ paymentPayload: { payload: { intent: { a: 1 } } } }), true);
      assert.equal(isV1PaymentIntent({ type: 'PaymentIntent' }), true);
    });

    it('leaves credit envelopes and non-objects alone', () => {
      assert.equal(isV1PaymentIntent({ x402Version: 2, paymentPayload: envelope() }), false);
      assert.equal(isV1PaymentIntent({ paymentPayload: { intent: 'string' } }), false);
      assert.equal(isV1PaymentIntent({ paymentPayload: { paymentIntent: null } }), false);
      assert.equal(isV1PaymentIntent({ paymentPayload: { type: 'paymentintent' } }), false);
      for (const x of [null, undefined, 'PaymentIntent', 1, [], [{ paymentIntent: {} }]]) {
        assert.equal(isV1PaymentIntent(x), false);
      }
    });
  });

  describe('request shape', () => {
    it('accepts the top-level shape', () => {
      assert.equal(RequestShapeSchema.safeParse({ x402Version: 2, paymentPayload: {} }).success, true);
      assert.equal(RequestShapeSchema.safeParse({ x402Version: 1, paymentPayload: {}, paymentRequirements: {} }).success, true);
    });

    it('lists the failing fields', () => {
      const r = RequestShapeSchema.safeParse({ x402Version: '2', paymentPayload: [], paymentRequirements: 'x' });
      assert.equal(r.success, false);
      const paths = fieldIssues(r.error!).map((i) => i.path).sort();
      assert.deepEqual(paths, ['paymentPayload', 'paymentRequirements', 'x402Version']);
      for (const i of fieldIssues(r.error!)) assert.ok(i.message.length > 0);
      const root = RequestShapeSchema.safeParse(null);
      assert.deepEqual(fieldIssues(root.error!).map((i) => i.path), ['(body)']);
      assert.equal(RequestShapeSchema.safeParse({ x402Version: 2.5, paymentPayload: {} }).success, false);
    });

    it('requires paymentRequirements on verify', () => {
      const r = VerifyRequestShapeSchema.safeParse({ x402Version: 2, paymentPayload: {} });
      assert.deepEqual(fieldIssues(r.error!).map((i) => i.path), ['paymentRequirements']);
    });
  });

  describe('parseCreditPayload', () => {
    it('parses a credit envelope with accepted requirements', () => {
      const e = envelope();
      const r = parseCreditPayload(2, e);
      assert.ok(r.ok);
      assert.deepEqual(r.voucher, voucher());
      assert.equal(r.signature, (e.payload as { signature: string }).signature);
      assert.equal(r.accepted?.scheme, 'credit');
      assert.deepEqual(r.accepted?.extra, { settlement: 'batch' });
    });

    it('accepts a top-level scheme instead of accepted', () => {
      const { accepted: _a, ...rest } = envelope();
      const r = parseCreditPayload(2, { ...rest, scheme: 'credit' });
      assert.ok(r.ok);
      assert.equal(r.accepted, undefined);
    });

    it('passes unknown requirement keys through', () => {
      const r = parseCreditPayload(2, { ...envelope(), accepted: { ...accepted(), future: 1 } });
      assert.ok(r.ok);
      assert.equal((r.accepted as Record<string, unknown>).future, 1);
    });

    it('invalid_x402_version comes first', () => {
      assert.equal(reasonOf(parseCreditPayload(1, {})), 'invalid_x402_version');
      assert.equal(reasonOf(parseCreditPayload(3, envelope())), 'invalid_x402_version');
      assert.equal(reasonOf(parseCreditPayload(2, { ...envelope(), x402Version: 1 })), 'invalid_x402_version');
    });

    it('unsupported_scheme for any other scheme', () => {
      assert.equal(reasonOf(parseCreditPayload(2, { ...envelope(), accepted: { ...accepted(), scheme: 'exact' } })), 'unsupported_scheme');
      assert.equal(reasonOf(parseCreditPayload(2, { ...envelope(), scheme: 'exact' })), 'unsupported_scheme');
      const { accepted: _a, ...rest } = envelope();
      assert.equal(reasonOf(parseCreditPayload(2, { ...rest, scheme: 'exact', payload: 'garbage' })), 'unsupported_scheme');
    });

    it('invalid_payload when the scheme is missing or the payload is malformed', () => {
      const { accepted: _a, ...noScheme } = envelope();
      const cases: Record<string, unknown>[] = [
        noScheme,
        { ...envelope(), payload: undefined },
        { ...envelope(), payload: 'x' },
        { ...envelope(), payload: [] },
        { ...envelope(), payload: { voucher: voucher() } },
        { ...envelope(), payload: { signature: 'A'.repeat(86) } },
        { ...envelope(), payload: { voucher: voucher(), signature: 'A'.repeat(85) } },
        { ...envelope(), payload: { voucher: voucher(), signature: `${'A'.repeat(86)}==` } },
        { ...envelope(), payload: { voucher: voucher(), signature: `${'A'.repeat(85)}+` } },
        { ...envelope(), payload: { voucher: voucher(), signature: 42 } },
        { ...envelope(), payload: { voucher: { ...voucher(), amount: '0' }, signature: 'A'.repeat(86) } },
        { ...envelope(), payload: { voucher: { ...voucher(), payTo: voucher().payTo.toUpperCase().replace('0X', '0x') }, signature: 'A'.repeat(86) } },
        { ...envelope(), payload: { voucher: voucher(), signature: 'A'.repeat(86), keyId: 'k' } },
      ];
      for (const [i, c] of cases.entries()) {
        const r = parseCreditPayload(2, c);
        assert.equal(reasonOf(r), 'invalid_payload', `case ${i}`);
        assert.ok(!r.ok && typeof r.detail === 'string' && r.detail.length > 0, `case ${i} has a detail`);
      }
    });

    it('invalid_payment_requirements when accepted is malformed', () => {
      const { maxTimeoutSeconds: _m, ...noTimeout } = accepted();
      for (const acc of [noTimeout, { ...accepted(), amount: 1500000 }, { ...accepted(), extra: [] }, { ...accepted(), network: '' }, 'credit', null]) {
        const r = parseCreditPayload(2, { ...envelope(), scheme: 'credit', accepted: acc });
        assert.equal(reasonOf(r), 'invalid_payment_requirements', JSON.stringify(acc));
      }
    });

    it('parsePaymentRequirements names the failing field', () => {
      const r = parsePaymentRequirements({ ...accepted(), payTo: 5 });
      assert.ok(!r.ok && r.detail?.startsWith('payTo'));
    });
  });
});
