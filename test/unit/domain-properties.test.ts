import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isV1PaymentIntent, parseCreditPayload } from '@credit-facilitator/wire/envelope';
import { evaluateVoucher, type VerificationContext, type VerificationInput } from '../../src/domain/verification.js';
import { encodeKey, generateAgentKeyPair, signVoucher, type Voucher } from '@credit-facilitator/wire/voucher';
import { AmountString } from '@credit-facilitator/wire/amounts';
import { INVALID_REASONS } from '@credit-facilitator/wire/invalid-reasons';
import { sampleVoucher } from '@credit-facilitator/wire/testing';

const keys = generateAgentKeyPair();
const base: Voucher = sampleVoucher();
const validEnvelope = {
  x402Version: 2,
  accepted: { scheme: 'credit', network: base.network, asset: base.asset, amount: base.amount, payTo: base.payTo, maxTimeoutSeconds: 60 },
  payload: { voucher: base, signature: signVoucher(base, keys.privateKey) },
};

const ctx: VerificationContext = {
  now: 1_700_000_100,
  clockSkewSeconds: 30,
  maxLifetimeSeconds: 900,
  network: base.network,
  asset: base.asset,
  merchant: { merchantId: base.merchantId, payoutAddress: base.payTo },
  agentKeys: [{ keyId: 'k', publicKey: encodeKey(keys.publicKey), status: 'active', borrowerId: base.borrowerId, operationalAgentId: base.operationalAgentId }],
  borrower: { borrowerId: base.borrowerId, status: 'ACTIVE' },
  spendIntent: {
    spendIntentId: base.spendIntentId, borrowerId: base.borrowerId, operationalAgentId: base.operationalAgentId,
    merchantId: base.merchantId, payTo: base.payTo, amount: base.amount, asset: base.asset, network: base.network,
    orderRef: base.orderRef, status: 'RESERVED', expiresAt: 1_700_001_000,
  },
  voucherAlreadyUsed: false,
};

/** Replace the value at one random path of a JSON tree with an arbitrary JSON value. */
function mutate(v: unknown, path: number[], replacement: unknown): unknown {
  if (path.length === 0 || v === null || typeof v !== 'object') return replacement;
  const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
  if (entries.length === 0) return replacement;
  const [head, ...rest] = path;
  const idx = (head ?? 0) % entries.length;
  const out: Record<string, unknown> = Array.isArray(v) ? ([...v] as unknown as Record<string, unknown>) : { ...v };
  const [k, child] = entries[idx]!;
  out[k] = mutate(child, rest, replacement);
  return out;
}

/** Arbitrary JSON, plus strings that look almost like amounts, ids, hex and base64url. */
const nearMiss = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.stringMatching(/^[-+0-9.eExX ]{0,20}$/),
  fc.stringMatching(/^0x[0-9a-fA-FgG]{0,66}$/),
  fc.stringMatching(/^[0-9a-fA-F-]{30,40}$/),
  fc.stringMatching(/^[A-Za-z0-9_+\/=-]{80,90}$/),
  fc.integer(),
  fc.double(),
);

const isResult = (r: { ok: boolean; reason?: string }): boolean =>
  r.ok || (INVALID_REASONS as readonly string[]).includes(r.reason ?? '');

describe('domain properties: never throw on arbitrary input', () => {
  it('parseCreditPayload and isV1PaymentIntent on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constant(2), fc.integer()), fc.jsonValue(), (version, payload) => {
        assert.equal(typeof isV1PaymentIntent(payload), 'boolean');
        const r = parseCreditPayload(version, payload as Record<string, unknown>);
        assert.ok(isResult(r));
      }),
      { numRuns: 500 },
    );
  });

  it('parseCreditPayload and evaluateVoucher on mutations of a valid envelope', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 5 }), nearMiss, (path, replacement) => {
        const env = mutate(validEnvelope, path, replacement) as Record<string, unknown>;
        const r = parseCreditPayload(2, env);
        assert.ok(isResult(r));
        if (r.ok) {
          const ev = evaluateVoucher({ voucher: r.voucher, signature: r.signature, ...(r.accepted ? { accepted: r.accepted } : {}) }, ctx);
          assert.ok(isResult(ev));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('parseCreditPayload on one-field mutations of the voucher', () => {
    const fields = Object.keys(base);
    fc.assert(
      fc.property(fc.constantFrom(...fields), nearMiss, (field, value) => {
        const voucher = { ...base, [field]: value };
        const r = parseCreditPayload(2, { ...validEnvelope, payload: { ...validEnvelope.payload, voucher } });
        assert.ok(isResult(r));
        if (r.ok) assert.ok(isResult(evaluateVoucher({ voucher: r.voucher, signature: r.signature }, ctx)));
      }),
      { numRuns: 1000 },
    );
    for (const amount of ['1.0', '1e3', '-1', ' 1', '0x10', '１']) {
      assert.ok(isResult(parseCreditPayload(2, { ...validEnvelope, payload: { ...validEnvelope.payload, voucher: { ...base, amount } } })));
    }
  });

  it('evaluateVoucher on arbitrary vouchers, signatures and requirements', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), fc.option(fc.jsonValue(), { nil: undefined }), (voucher, signature, requirements) => {
        const input = { voucher, signature, requirements } as unknown as VerificationInput;
        assert.ok(isResult(evaluateVoucher(input, ctx)));
      }),
      { numRuns: 300 },
    );
  });

  it('AmountString never throws', () => {
    fc.assert(fc.property(fc.oneof(nearMiss, fc.string()), (s) => void AmountString.safeParse(s)), { numRuns: 1000 });
  });

  it('a valid envelope passes end to end', () => {
    const r = parseCreditPayload(2, validEnvelope);
    assert.ok(r.ok);
    assert.deepEqual(evaluateVoucher({ voucher: r.voucher, signature: r.signature, accepted: r.accepted! }, ctx), { ok: true, payer: base.borrowerId });
  });
});
