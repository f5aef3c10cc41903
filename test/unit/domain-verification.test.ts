import assert from 'node:assert/strict';
import {
  evaluateVoucher,
  type AgentKeyRecord,
  type SpendIntentRecord,
  type VerificationContext,
  type VerificationInput,
} from '../../src/domain/verification.js';
import type { PaymentRequirements } from '@credit-facilitator/wire/envelope';
import { encodeKey, generateAgentKeyPair, signVoucher, type Voucher } from '@credit-facilitator/wire/voucher';
import { sampleVoucher } from '@credit-facilitator/wire/testing';

const NOW = 1_700_000_100;
const BORROWER = '33333333-3333-4333-8333-333333333333';
const AGENT = '44444444-4444-4444-8444-444444444444';
const MERCHANT = '55555555-5555-4555-8555-555555555555';
const PAY_TO = '0x00000000000000000000000000000000000000aa';
const ASSET = '0x00000000000000000000000000000000000000bb';

const voucher = (patch: Partial<Voucher> = {}): Voucher => sampleVoucher(patch);

const requirements = (patch: Partial<PaymentRequirements> = {}): PaymentRequirements => ({
  scheme: 'credit',
  network: 'eip155:84532',
  asset: ASSET,
  amount: '1500000',
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  ...patch,
});

const active = generateAgentKeyPair();
const revoked = generateAgentKeyPair();
const key = (kp: { publicKey: Uint8Array }, status: 'active' | 'revoked', patch: Partial<AgentKeyRecord> = {}): AgentKeyRecord => ({
  keyId: `k-${status}`,
  publicKey: encodeKey(kp.publicKey),
  status,
  borrowerId: BORROWER,
  operationalAgentId: AGENT,
  ...patch,
});

const intent = (patch: Partial<SpendIntentRecord> = {}): SpendIntentRecord => ({
  spendIntentId: '22222222-2222-4222-8222-222222222222',
  borrowerId: BORROWER,
  operationalAgentId: AGENT,
  merchantId: MERCHANT,
  payTo: PAY_TO,
  amount: '1500000',
  asset: ASSET,
  network: 'eip155:84532',
  orderRef: 'order-42',
  status: 'RESERVED',
  expiresAt: NOW + 600,
  ...patch,
});

const ctx = (patch: Partial<VerificationContext> = {}): VerificationContext => ({
  now: NOW,
  clockSkewSeconds: 30,
  maxLifetimeSeconds: 900,
  network: 'eip155:84532',
  asset: ASSET.toUpperCase().replace('0X', '0x'),
  merchant: { merchantId: MERCHANT, payoutAddress: PAY_TO },
  agentKeys: [key(revoked, 'revoked'), key(active, 'active')],
  borrower: { borrowerId: BORROWER, status: 'ACTIVE' },
  spendIntent: intent(),
  voucherAlreadyUsed: false,
  ...patch,
});

function input(v: Voucher = voucher(), extra: Partial<VerificationInput> = {}, signer = active): VerificationInput {
  return { voucher: v, signature: signVoucher(v, signer.privateKey), ...extra };
}

function reason(i: VerificationInput, c: VerificationContext = ctx()): string {
  const r = evaluateVoucher(i, c);
  return r.ok ? 'ok' : r.reason;
}

describe('domain/verification', () => {
  it('accepts a valid voucher and names the borrower as payer', () => {
    assert.deepEqual(evaluateVoucher(input(), ctx()), { ok: true, payer: BORROWER });
    assert.equal(reason(input(voucher(), { accepted: requirements(), requirements: requirements({ payTo: PAY_TO.toUpperCase().replace('0X', '0x') }) })), 'ok');
  });

  it('invalid_network', () => {
    assert.equal(reason(input(), ctx({ network: 'eip155:8453' })), 'invalid_network');
    assert.equal(reason(input(voucher(), { requirements: requirements({ network: 'eip155:1' }) })), 'invalid_network');
    assert.equal(reason(input(voucher(), { accepted: requirements({ network: 'eip155:1' }) })), 'invalid_network');
  });

  it('invalid_asset', () => {
    assert.equal(reason(input(), ctx({ asset: '0x00000000000000000000000000000000000000cc' })), 'invalid_asset');
    assert.equal(reason(input(voucher(), { requirements: requirements({ asset: 'USDC' }) })), 'invalid_asset');
    assert.equal(reason(input(voucher(), { accepted: requirements({ asset: 'USDC' }) })), 'invalid_asset');
  });

  it('unsupported_scheme, amount_mismatch, recipient_mismatch against the requirements', () => {
    assert.equal(reason(input(voucher(), { requirements: requirements({ scheme: 'exact' }) })), 'unsupported_scheme');
    assert.equal(reason(input(voucher(), { requirements: requirements({ amount: '1500001' }) })), 'amount_mismatch');
    assert.equal(reason(input(voucher(), { requirements: requirements({ payTo: '0x00000000000000000000000000000000000000ab' }) })), 'recipient_mismatch');
  });

  it('the same checks against accepted', () => {
    assert.equal(reason(input(voucher(), { accepted: requirements({ scheme: 'exact' }) })), 'unsupported_scheme');
    assert.equal(reason(input(voucher(), { accepted: requirements({ amount: '1' }) })), 'amount_mismatch');
    assert.equal(reason(input(voucher(), { accepted: requirements({ payTo: '0x00000000000000000000000000000000000000ab' }) })), 'recipient_mismatch');
  });

  it('recipient_mismatch when the voucher pays another merchant or address', () => {
    assert.equal(reason(input(voucher({ merchantId: '66666666-6666-4666-8666-666666666666' }))), 'recipient_mismatch');
    assert.equal(reason(input(voucher({ payTo: '0x00000000000000000000000000000000000000ab' }))), 'recipient_mismatch');
    assert.equal(reason(input(), ctx({ merchant: { merchantId: MERCHANT, payoutAddress: '0x00000000000000000000000000000000000000ab' } })), 'recipient_mismatch');
  });

  it('voucher_not_yet_valid beyond the clock skew', () => {
    assert.equal(reason(input(voucher({ issuedAt: NOW + 30, expiresAt: NOW + 300 }))), 'ok');
    assert.equal(reason(input(voucher({ issuedAt: NOW + 31, expiresAt: NOW + 300 }))), 'voucher_not_yet_valid');
  });

  it('voucher_expired at and after expiresAt', () => {
    assert.equal(reason(input(voucher({ expiresAt: NOW }))), 'voucher_expired');
    assert.equal(reason(input(voucher({ expiresAt: NOW - 1 }))), 'voucher_expired');
    assert.equal(reason(input(voucher({ expiresAt: NOW + 1 }))), 'ok');
  });

  it('policy_denied for a lifetime over the maximum or not positive', () => {
    assert.equal(reason(input(voucher({ issuedAt: NOW - 100, expiresAt: NOW + 800 }))), 'ok');
    assert.equal(reason(input(voucher({ issuedAt: NOW - 100, expiresAt: NOW + 801 }))), 'policy_denied');
    assert.equal(reason(input(voucher({ issuedAt: NOW + 20, expiresAt: NOW + 10 }))), 'policy_denied');
    assert.equal(reason(input(voucher({ issuedAt: NOW + 10, expiresAt: NOW + 10 }))), 'policy_denied');
  });

  it('unknown_agent_key when no key belongs to this borrower and agent', () => {
    assert.equal(reason(input(), ctx({ agentKeys: [] })), 'unknown_agent_key');
    const foreign = [
      key(active, 'active', { borrowerId: '77777777-7777-4777-8777-777777777777' }),
      key(active, 'active', { operationalAgentId: '88888888-8888-4888-8888-888888888888' }),
    ];
    assert.equal(reason(input(), ctx({ agentKeys: foreign })), 'unknown_agent_key');
  });

  it('agent_key_revoked when only a revoked key verifies', () => {
    assert.equal(reason(input(voucher(), {}, revoked)), 'agent_key_revoked');
    assert.equal(reason(input(), ctx({ agentKeys: [key(active, 'revoked')] })), 'agent_key_revoked');
  });

  it('invalid_signature when no key verifies', () => {
    const other = generateAgentKeyPair();
    assert.equal(reason(input(voucher(), {}, other)), 'invalid_signature');
    const i = input();
    assert.equal(reason({ ...i, voucher: voucher({ orderRef: 'order-43' }) }, ctx({ spendIntent: intent({ orderRef: 'order-43' }) })), 'invalid_signature');
    assert.equal(reason({ ...i, signature: 'A'.repeat(86) }), 'invalid_signature');
    assert.equal(reason(i, ctx({ agentKeys: [key(active, 'active', { publicKey: 'garbage' })] })), 'invalid_signature');
  });

  it('borrower_not_active', () => {
    assert.equal(reason(input(), ctx({ borrower: null })), 'borrower_not_active');
    assert.equal(reason(input(), ctx({ borrower: { borrowerId: BORROWER, status: 'FACILITY_ACCEPTED' } })), 'borrower_not_active');
    assert.equal(reason(input(), ctx({ borrower: { borrowerId: BORROWER, status: 'SUSPENDED' } })), 'borrower_not_active');
  });

  it('voucher_already_used', () => {
    assert.equal(reason(input(), ctx({ voucherAlreadyUsed: true })), 'voucher_already_used');
    assert.equal(reason(input(), ctx({ spendIntent: intent({ status: 'CONSUMED', consumedByVoucherId: '99999999-9999-4999-8999-999999999999' }) })), 'voucher_already_used');
    assert.equal(reason(input(), ctx({ spendIntent: intent({ status: 'CONSUMED' }) })), 'voucher_already_used');
  });

  it('a spend intent consumed by this very voucher is not a second use', () => {
    const si = intent({ status: 'CONSUMED', consumedByVoucherId: voucher().voucherId });
    assert.equal(reason(input(), ctx({ spendIntent: si })), 'ok');
  });

  it('unknown_spend_intent for a missing, mismatched, released or expired intent', () => {
    assert.equal(reason(input(), ctx({ spendIntent: null })), 'unknown_spend_intent');
    const mismatches: Partial<SpendIntentRecord>[] = [
      { spendIntentId: '99999999-9999-4999-8999-999999999999' },
      { borrowerId: '99999999-9999-4999-8999-999999999999' },
      { operationalAgentId: '99999999-9999-4999-8999-999999999999' },
      { merchantId: '99999999-9999-4999-8999-999999999999' },
      { payTo: '0x00000000000000000000000000000000000000ab' },
      { amount: '1500001' },
      { asset: '0x00000000000000000000000000000000000000cc' },
      { network: 'eip155:1' },
      { orderRef: 'order-43' },
      { status: 'RELEASED' },
      { status: 'EXPIRED' },
      { expiresAt: NOW },
    ];
    for (const m of mismatches) {
      assert.equal(reason(input(), ctx({ spendIntent: intent(m) })), 'unknown_spend_intent', JSON.stringify(m));
    }
    assert.equal(reason(input(), ctx({ spendIntent: intent({ payTo: PAY_TO.toUpperCase().replace('0X', '0x'), merchantId: MERCHANT.toUpperCase() }) })), 'ok');
  });

  it('applies the rules in order: the first failure wins', () => {
    const everythingWrong = ctx({
      agentKeys: [],
      borrower: null,
      spendIntent: null,
      voucherAlreadyUsed: true,
    });
    assert.equal(reason(input(voucher({ expiresAt: NOW - 1, issuedAt: NOW - 10 })), everythingWrong), 'voucher_expired');
    assert.equal(reason(input(), everythingWrong), 'unknown_agent_key');
    assert.equal(reason(input(), ctx({ borrower: null, voucherAlreadyUsed: true, spendIntent: null })), 'borrower_not_active');
    assert.equal(reason(input(), ctx({ voucherAlreadyUsed: true, spendIntent: null })), 'voucher_already_used');
    assert.equal(reason(input(voucher(), { requirements: requirements({ amount: '1', network: 'eip155:1' }) })), 'invalid_network');
  });

  it('reports payer on failures once the voucher parses, and refuses malformed input', () => {
    const r = evaluateVoucher(input(), ctx({ borrower: null }));
    assert.deepEqual(r, { ok: false, reason: 'borrower_not_active', payer: BORROWER });
    assert.deepEqual(evaluateVoucher({ voucher: { v: 2 } as unknown as Voucher, signature: 'x' }, ctx()), { ok: false, reason: 'invalid_payload' });
    const bad = evaluateVoucher(input(voucher(), { requirements: { scheme: 'credit' } as PaymentRequirements }), ctx());
    assert.equal(bad.ok ? 'ok' : bad.reason, 'invalid_payment_requirements');
  });
});
