import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rotateAgentKey } from '../../src/agents/agent-keys.js';
import { ToolError } from '../../src/domain/tool-errors.js';
import { changeBorrowerStanding } from '../../src/store/borrower-standing.js';
import { findBorrower } from '../../src/store/borrowers.js';
import { encodeKey, generateAgentKeyPair, type Voucher } from '@credit-facilitator/wire/voucher';
import { agentDeps, signAndSubmit } from '../helpers/onboarding.js';
import {
  call,
  capture,
  GENEROUS_GRANT,
  newBorrower,
  newMerchant,
  newVoucher,
  tamperedPayload,
  world,
  type TestBorrower,
  type TestMerchant,
  type World,
} from '../helpers/world.js';

describe('facilitator: verify gives each invalidReason', function () {
  let w: World;
  let m: TestMerchant;
  let b: TestBorrower;
  before(async function () {
    w = await world();
    m = await newMerchant(w);
    b = await newBorrower(w);
  });

  /**
   * A voucher prepared for real (spend intent, credit hold), then altered by `tweak` and re-signed
   * with the agent's key (or `key`): the forgeries prepare_x402_payment itself would never issue.
   */
  async function payload(tweak?: (v: Voucher) => Voucher, key?: Uint8Array) {
    const real = await newVoucher(w, m, b, '1000');
    return tweak === undefined && key === undefined ? real.paymentPayload : tamperedPayload(real, b, tweak, key);
  }

  async function verify(paymentPayload: unknown, requirements?: unknown, x402Version = 2) {
    const p = paymentPayload as { accepted: unknown };
    const res = await call(w, 'POST', '/facilitator/verify', { token: m.apiKey, body: { x402Version, paymentPayload, paymentRequirements: requirements ?? p.accepted } });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json as { isValid: boolean; invalidReason?: string; payer?: string };
  }

  const expectReason = async (p: Promise<{ isValid: boolean; invalidReason?: string }>, reason: string) => {
    const r = await p;
    assert.equal(r.isValid, false);
    assert.equal(r.invalidReason, reason);
  };

  it('accepts a good voucher and names the payer', async function () {
    const r = await verify(await payload());
    assert.deepEqual({ isValid: r.isValid, payer: r.payer }, { isValid: true, payer: b.borrowerId });
  });

  it('invalid_x402_version, unsupported_scheme, invalid_payload, invalid_payment_requirements', async function () {
    const p = await payload();
    await expectReason(verify(p, undefined, 1), 'invalid_x402_version');
    await expectReason(verify({ ...p, accepted: { ...p.accepted, scheme: 'exact' } }), 'unsupported_scheme');
    await expectReason(verify({ ...p, payload: { voucher: p.payload.voucher } }), 'invalid_payload');
    await expectReason(verify({ ...p, accepted: { scheme: 'credit' } }, p.accepted), 'invalid_payment_requirements');
  });

  it('invalid_network, invalid_asset, amount_mismatch, recipient_mismatch', async function () {
    await expectReason(verify(await payload((v) => ({ ...v, network: 'eip155:1' }))), 'invalid_network');
    await expectReason(verify(await payload((v) => ({ ...v, asset: '0x' + '1'.repeat(40) }))), 'invalid_asset');
    const p = await payload();
    await expectReason(verify(p, { ...p.accepted, amount: '999' }), 'amount_mismatch');
    await expectReason(verify(p, { ...p.accepted, payTo: '0x' + '2'.repeat(40) }), 'recipient_mismatch');
    const other = await newMerchant(w);
    const res = await call(w, 'POST', '/facilitator/verify', { token: other.apiKey, body: { x402Version: 2, paymentPayload: p, paymentRequirements: p.accepted } });
    assert.equal(res.json.invalidReason, 'recipient_mismatch', 'a voucher for another merchant');
  });

  it('voucher_expired, voucher_not_yet_valid, policy_denied', async function () {
    await expectReason(verify(await payload((v) => ({ ...v, issuedAt: v.issuedAt - 7200, expiresAt: v.issuedAt - 3600 }))), 'voucher_expired');
    await expectReason(verify(await payload((v) => ({ ...v, issuedAt: v.issuedAt + 3600, expiresAt: v.issuedAt + 4000 }))), 'voucher_not_yet_valid');
    await expectReason(verify(await payload((v) => ({ ...v, expiresAt: v.issuedAt + 86_400 }))), 'policy_denied');
  });

  it('invalid_signature, unknown_agent_key, agent_key_revoked', async function () {
    await expectReason(verify(await payload(undefined, generateAgentKeyPair().privateKey)), 'invalid_signature');
    await expectReason(verify(await payload((v) => ({ ...v, operationalAgentId: randomUUID() }))), 'unknown_agent_key');
    // rotate_agent_key, signed by the wallet, revokes the key the voucher was signed with.
    const rotating = await newBorrower(w);
    const p = (await newVoucher(w, m, rotating, '1000')).paymentPayload;
    const deps = await agentDeps(w);
    const step = await rotateAgentKey(deps, rotating.principal, {
      idempotency_key: randomUUID(),
      public_key: encodeKey(generateAgentKeyPair().publicKey),
      per_payment_limit: GENEROUS_GRANT.perPaymentLimit,
      daily_limit: GENEROUS_GRANT.dailyLimit,
      expires_at: Math.floor(Date.now() / 1000) + 86_400,
    });
    assert.equal((await signAndSubmit(deps, rotating.wallet, step)).status, 'completed');
    await expectReason(verify(p), 'agent_key_revoked');
  });

  it('unknown_spend_intent, voucher_already_used, borrower_not_active', async function () {
    await expectReason(verify(await payload((v) => ({ ...v, spendIntentId: randomUUID() }))), 'unknown_spend_intent');
    await expectReason(verify(await payload((v) => ({ ...v, amount: '1001' })), undefined), 'unknown_spend_intent');
    const used = await newVoucher(w, m, b, '1000');
    assert.equal((await capture(w, m, used.captureBody)).status, 200);
    await expectReason(verify(used.paymentPayload), 'voucher_already_used');
    const idle = await newBorrower(w);
    const v = await newVoucher(w, m, idle, '1000');
    // A status other than ACTIVE, written the way every standing writer does: the borrower, then its agents' copies.
    await changeBorrowerStanding(w.store.c, idle.borrowerId, () => ({ result: undefined, change: { status: 'SUSPENDED' } }));
    await expectReason(verify(v.paymentPayload), 'borrower_not_active');
  });

  it('prepare refuses a payment beyond the available credit (INSUFFICIENT_CREDIT); one that fits verifies', async function () {
    // Spend the facility down to 500 with a real prepared payment that holds the rest.
    const poor = await newBorrower(w);
    const facility = await findBorrower(w.store.c, poor.borrowerId);
    await newVoucher(w, m, poor, String((facility?.available ?? 0) - 500));
    await assert.rejects(newVoucher(w, m, poor, '501'), (e: unknown) => e instanceof ToolError && e.code === 'INSUFFICIENT_CREDIT');
    const fits = await newVoucher(w, m, poor, '500');
    assert.equal((await verify(fits.paymentPayload)).isValid, true);
  });

  it('capture answers an invalid voucher with 422 and the same reason words, and frees the key', async function () {
    const p = await payload((v) => ({ ...v, network: 'eip155:1' }));
    const key = randomUUID();
    const res = await capture(w, m, { x402Version: 2, paymentPayload: p }, key);
    assert.equal(res.status, 422);
    assert.equal(res.json.error.code, 'PAYMENT_REJECTED');
    assert.equal(res.json.error.invalidReason, 'invalid_network');
    const good = await payload();
    assert.equal((await capture(w, m, { x402Version: 2, paymentPayload: good }, key)).status, 200, 'the refused key is free again');
  });
});
