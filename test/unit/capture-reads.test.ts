import assert from 'node:assert/strict';
import { evaluateVoucher, type VerificationContext, type VerificationInput } from '../../src/domain/verification.js';
import { contextWithFate, fateMayChange, intentView, lostClaimReason } from '../../src/payments/intent-view.js';
import { allCopiesRevoked, copiedKeys, keyCopy, withKeyCopied } from '../../src/store/agent-key-copies.js';
import type { AgentKeyCopy, AgentKeyDoc, SpendIntentDoc, SpendIntentFateDoc } from '../../src/store/documents.js';
import { withFate } from '../../src/store/spend-intents.js';
import { encodeKey, generateAgentKeyPair, signVoucher, type Voucher } from '@credit-facilitator/wire/voucher';
import { SAMPLE, sampleVoucher } from '@credit-facilitator/wire/testing';

const CREATED = new Date('2026-01-01T00:00:00Z');
const keyDoc = (id: string, status: 'active' | 'revoked' = 'active'): AgentKeyDoc => ({
  _id: id,
  borrowerId: SAMPLE.borrowerId,
  operationalAgentId: SAMPLE.operationalAgentId,
  publicKey: `pk-${id}`,
  status,
  createdAt: CREATED,
  revokedAt: null,
});
const copy = (id: string, status: 'active' | 'revoked' = 'active'): AgentKeyCopy => ({ keyId: id, publicKey: `pk-${id}`, status, borrowerId: SAMPLE.borrowerId, createdAt: CREATED });

describe("agent key copies: what a capture reads of an agent's keys", () => {
  it('copies the verification fields of a key', () => {
    assert.deepEqual(keyCopy(keyDoc('a')), copy('a'));
    assert.deepEqual(keyCopy(keyDoc('a'), true), copy('a', 'revoked'));
  });

  it('adds a missing key as it is, or revoked when its agent or its document is', () => {
    assert.deepEqual(withKeyCopied([copy('a')], keyDoc('b'), false), [copy('a'), copy('b')]);
    assert.deepEqual(withKeyCopied([], keyDoc('b'), true), [copy('b', 'revoked')]);
    assert.deepEqual(withKeyCopied([], keyDoc('b', 'revoked'), false), [copy('b', 'revoked')]);
  });

  it('only ever revokes a listed key: never turns a revoked copy active, and reports no change as null', () => {
    assert.equal(withKeyCopied([copy('a')], keyDoc('a'), false), null);
    assert.equal(withKeyCopied([copy('a', 'revoked')], keyDoc('a'), false), null);
    assert.equal(withKeyCopied([copy('a', 'revoked')], keyDoc('a'), true), null);
    assert.deepEqual(withKeyCopied([copy('a'), copy('b')], keyDoc('b'), true), [copy('a'), copy('b', 'revoked')]);
    assert.deepEqual(withKeyCopied([copy('a')], keyDoc('a', 'revoked'), false), [copy('a', 'revoked')]);
  });

  it('revokes every copy of a revoked agent; null when none was active', () => {
    assert.deepEqual(allCopiesRevoked([copy('a'), copy('b', 'revoked')]), [copy('a', 'revoked'), copy('b', 'revoked')]);
    assert.equal(allCopiesRevoked([copy('a', 'revoked')]), null);
    assert.equal(allCopiesRevoked([]), null);
  });

  it('gives the keys to verify from the copy, or null for an older document without one', () => {
    assert.deepEqual(copiedKeys({ _id: SAMPLE.operationalAgentId, keys: [copy('a')] }), [{ ...copy('a'), operationalAgentId: SAMPLE.operationalAgentId }]);
    assert.deepEqual(copiedKeys({ _id: SAMPLE.operationalAgentId, keys: [] }), []);
    assert.equal(copiedKeys({ _id: SAMPLE.operationalAgentId }), null);
  });
});

/*
 * A capture reads the intent document only (its status a copy of the fate, written late) and
 * learns the fate from its consume insert. Every combination below must end with the answer a
 * capture that read the fate up front gave: the same refusal reason, or acceptance.
 */
describe('capture without the fate read: the same answers as with it', () => {
  const NOW = 1_700_000_100;
  const OWN_PAYMENT = 'pay-own';
  const agent = generateAgentKeyPair();
  const old = generateAgentKeyPair();

  const intentDoc = (patch: Partial<SpendIntentDoc>): SpendIntentDoc => ({
    _id: '22222222-2222-4222-8222-222222222222',
    ...SAMPLE,
    amount: '1500000',
    network: 'eip155:84532',
    orderRef: 'order-42',
    resource: 'https://merchant.example/report/42',
    status: 'RESERVED',
    idempotencyKey: 'k',
    expiresAt: NOW + 600,
    createdAt: CREATED,
    ...patch,
  });

  const baseCtx = (intent: SpendIntentDoc | null, borrowerStatus: string): VerificationContext => ({
    now: NOW,
    clockSkewSeconds: 30,
    maxLifetimeSeconds: 900,
    network: 'eip155:84532',
    asset: SAMPLE.asset,
    merchant: { merchantId: SAMPLE.merchantId, payoutAddress: SAMPLE.payTo },
    agentKeys: [
      { keyId: 'k1', publicKey: encodeKey(agent.publicKey), status: 'active', borrowerId: SAMPLE.borrowerId, operationalAgentId: SAMPLE.operationalAgentId },
      { keyId: 'k0', publicKey: encodeKey(old.publicKey), status: 'revoked', borrowerId: SAMPLE.borrowerId, operationalAgentId: SAMPLE.operationalAgentId },
    ],
    borrower: { borrowerId: SAMPLE.borrowerId, status: borrowerStatus },
    ...intentView(intent, OWN_PAYMENT),
  });

  const v: Voucher = sampleVoucher();
  const fate = (patch: Partial<SpendIntentFateDoc> & Pick<SpendIntentFateDoc, 'fate'>): SpendIntentFateDoc => ({ _id: v.spendIntentId, at: CREATED, ...patch });
  const fates: Record<string, SpendIntentFateDoc | null> = {
    undecided: null,
    expired: fate({ fate: 'EXPIRED' }),
    'consumed by this voucher, another payment': fate({ fate: 'CONSUMED', voucherId: v.voucherId, paymentId: 'pay-other' }),
    'consumed by another voucher': fate({ fate: 'CONSUMED', voucherId: 'v-other', paymentId: 'pay-other' }),
    'consumed by this capture': fate({ fate: 'CONSUMED', voucherId: v.voucherId, paymentId: OWN_PAYMENT }),
  };
  // The intent document as a capture may find it: before the copy of its fate, or with it.
  const docs = (f: SpendIntentFateDoc | null): Record<string, SpendIntentDoc | null> => ({
    missing: null,
    reserved: intentDoc({}),
    'reserved, past its expiry': intentDoc({ expiresAt: NOW - 1 }),
    'reserved, other terms': intentDoc({ amount: '1' }),
    'with its fate copied': withFate(intentDoc({}), f),
    'other terms, fate copied': withFate(intentDoc({ amount: '1' }), f),
  });
  const inputs: Record<string, VerificationInput> = {
    'signed by the active key': { voucher: v, signature: signVoucher(v, agent.privateKey) },
    'signed by the revoked key': { voucher: v, signature: signVoucher(v, old.privateKey) },
  };

  /** Before: the fate read with the intent; the consume could then only lose to a race (voucher_already_used). */
  function before(input: VerificationInput, doc: SpendIntentDoc | null, f: SpendIntentFateDoc | null, borrower: string): string {
    const verdict = evaluateVoucher(input, baseCtx(doc && withFate(doc, f), borrower));
    if (!verdict.ok) return verdict.reason;
    return consumes(f) ? 'accepted' : 'voucher_already_used';
  }

  /** Now: the intent document only; a refusal the fate may change, and a lost consume, read the fate. */
  function now(input: VerificationInput, doc: SpendIntentDoc | null, f: SpendIntentFateDoc | null, borrower: string): string {
    const ctx = baseCtx(doc, borrower);
    let verdict = evaluateVoucher(input, ctx);
    if (!verdict.ok && doc && fateMayChange(verdict.reason)) verdict = evaluateVoucher(input, contextWithFate(ctx, doc, f, OWN_PAYMENT));
    if (!verdict.ok) return verdict.reason;
    assert.ok(doc);
    return consumes(f) ? 'accepted' : lostClaimReason(input, ctx, doc, f, OWN_PAYMENT);
  }

  /** consumeSpendIntent's decision: the insert lands, or the fate decided first is this capture's own. */
  const consumes = (f: SpendIntentFateDoc | null) => f === null || (f.fate === 'CONSUMED' && f.voucherId === v.voucherId && f.paymentId === OWN_PAYMENT);

  it('answers every combination of intent document, fate, signature and borrower as before', () => {
    const seen = new Set<string>();
    for (const [fateName, f] of Object.entries(fates)) {
      for (const [docName, doc] of Object.entries(docs(f))) {
        for (const [inputName, input] of Object.entries(inputs)) {
          for (const borrower of ['ACTIVE', 'SUSPENDED']) {
            const expected = before(input, doc, f, borrower);
            seen.add(expected);
            assert.equal(now(input, doc, f, borrower), expected, `${fateName} / ${docName} / ${inputName} / ${borrower}`);
          }
        }
      }
    }
    // The table reaches every answer the fate takes part in.
    assert.deepEqual([...seen].sort(), ['accepted', 'agent_key_revoked', 'borrower_not_active', 'unknown_spend_intent', 'voucher_already_used']);
  });

  it('reads the fate only for the refusals it can change', () => {
    assert.equal(fateMayChange('voucher_already_used'), true);
    assert.equal(fateMayChange('unknown_spend_intent'), true);
    for (const r of ['agent_key_revoked', 'borrower_not_active', 'invalid_signature', 'voucher_expired', 'recipient_mismatch'] as const) assert.equal(fateMayChange(r), false);
  });

  it('recognises a resumed capture of its own payment, and calls another payment a reuse', () => {
    const consumed = withFate(intentDoc({}), fates['consumed by this capture']!);
    assert.equal(intentView(consumed, OWN_PAYMENT).voucherAlreadyUsed, false);
    assert.equal(intentView(consumed, 'pay-new').voucherAlreadyUsed, true);
    assert.equal(intentView(intentDoc({}), 'pay-new').voucherAlreadyUsed, false);
  });
});
