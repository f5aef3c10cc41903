import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../src/main/app-deps.js';
import { rotateAgentKey } from '../../src/agents/agent-keys.js';
import { getBorrowerStatus } from '../../src/agents/borrowers.js';
import { ToolError, type ToolErrorCode } from '../../src/domain/tool-errors.js';
import { preparePayment } from '../../src/agents/prepare-payment.js';
import { spendDayId, utcDay } from '../../src/domain/agent-policy.js';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { encodeKey, generateAgentKeyPair } from '@credit-facilitator/wire/voucher';
import { agentDeps, onboardBorrower, paymentRequiredHeader, prepareAndSign, signAndSubmit, type OnboardedBorrower } from '../helpers/onboarding.js';
import { call, capture, newMerchant, pollUntil, world, type TestMerchant, type World } from '../helpers/world.js';
import { findBorrower } from '../../src/store/borrowers.js';

async function rejects(p: Promise<unknown>, code: ToolErrorCode, reason?: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ToolError, `expected ToolError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (reason) assert.equal(err.details.reason, reason);
    return;
  }
  assert.fail(`expected ToolError ${code}, but the call succeeded`);
}

describe('agents: prepare_x402_payment, spend intents and agent keys', function () {
  let w: World;
  let deps: AppDeps;
  let m: TestMerchant;

  before(async function () {
    this.timeout(300_000);
    w = await world();
    deps = await agentDeps(w);
    m = await newMerchant(w, 'Agent Merchant');
  });

  const credit = async (b: OnboardedBorrower) => {
    const doc = await findBorrower(w.store.c, b.borrowerId);
    return { available: doc?.available, holds: Object.keys(doc?.holds ?? {}).length };
  };
  const spentToday = async (b: OnboardedBorrower) => (await w.store.c.agentSpendDays.findOne({ _id: spendDayId(b.agentKeyId, utcDay(Date.now())) }))?.spent ?? 0;

  it('a prepared voucher signed over signing_input captures and settles to CONFIRMED', async () => {
    const b = await onboardBorrower(w);
    const signed = await prepareAndSign(w, b, m, '1500000');
    const p = signed.prepared;
    assert.equal(p.reused, false);
    assert.equal(p.status, 'RESERVED');
    assert.equal(p.voucher.amount, '1500000');
    assert.equal(p.voucher.payTo, m.payoutAddress.toLowerCase());
    assert.equal(p.payment_requirements.scheme, 'credit');
    assert.ok(p.signing_input.startsWith('x402-credit-voucher:v1\n{'));
    assert.equal((await credit(b)).holds, 1);
    assert.equal(await spentToday(b), 1_500_000);
    const status = await getBorrowerStatus(deps, b.principal, {});
    assert.equal(status.credit.held, '1500000');

    const verified = await call(w, 'POST', '/facilitator/verify', { token: m.apiKey, body: { ...signed.body, paymentRequirements: p.payment_requirements } });
    assert.equal(verified.json.isValid, true, JSON.stringify(verified.json));
    const res = await capture(w, m, signed.body, signed.idempotencyKey);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    await pollUntil(w, m, res.json.receipt.paymentId, 'CONFIRMED');
  });

  it('the same order_ref returns the same intent, voucher and key; concurrent calls create one', async () => {
    const b = await onboardBorrower(w);
    const header = paymentRequiredHeader(deps, m, '250000', 'order-same-1');
    const first = await preparePayment(deps, b.principal, { payment_required: header });
    const again = await preparePayment(deps, b.principal, { payment_required: decodePaymentRequiredHeader(header) as unknown as Record<string, unknown> });
    assert.equal(again.reused, true);
    assert.equal(again.spend_intent_id, first.spend_intent_id);
    assert.equal(again.idempotency_key, first.idempotency_key);
    assert.deepEqual(again.voucher, first.voucher);
    await rejects(preparePayment(deps, b.principal, { payment_required: paymentRequiredHeader(deps, m, '260000', 'order-same-1') }), 'INVALID_INPUT');

    const many = await Promise.all(
      Array.from({ length: 6 }, () => preparePayment(deps, b.principal, { payment_required: paymentRequiredHeader(deps, m, '100000'), order_ref: 'order-race' })),
    );
    assert.equal(new Set(many.map((r) => r.spend_intent_id)).size, 1);
    assert.equal(new Set(many.map((r) => r.voucher.voucherId)).size, 1);
    assert.equal(await w.store.c.spendIntents.countDocuments({ borrowerId: b.borrowerId, orderRef: 'order-race' }), 1);
    assert.equal((await credit(b)).holds, 2);
    assert.equal(await spentToday(b), 350_000);

    const key = randomUUID();
    const input = { payment_required: paymentRequiredHeader(deps, m, '1000'), order_ref: 'order-keyed', idempotency_key: key };
    const keyed = await preparePayment(deps, b.principal, input);
    assert.equal((await preparePayment(deps, b.principal, input)).spend_intent_id, keyed.spend_intent_id);
    await rejects(preparePayment(deps, b.principal, { ...input, order_ref: 'order-other' }), 'IDEMPOTENCY_KEY_CONFLICT');

    // A refused first call frees its key: the same key works once the cause is fixed.
    const retryKey = randomUUID();
    await rejects(preparePayment(deps, b.principal, { payment_required: paymentRequiredHeader(deps, m, '6000000'), order_ref: 'order-fix', idempotency_key: retryKey }), 'POLICY_DENIED', 'over_per_payment_limit');
    const fixed = await preparePayment(deps, b.principal, { payment_required: paymentRequiredHeader(deps, m, '6000'), order_ref: 'order-fix', idempotency_key: retryKey });
    assert.equal(fixed.reused, false);
  });

  it('refuses over the per-payment limit, the daily limit and available credit, holding nothing', async () => {
    const b = await onboardBorrower(w, { perPaymentLimit: '600', dailyLimit: '1000' });
    const before = await credit(b);
    await rejects(preparePayment(deps, b.principal, { payment_required: paymentRequiredHeader(deps, m, '601'), order_ref: 'o-1' }), 'POLICY_DENIED', 'over_per_payment_limit');
    await preparePayment(deps, b.principal, { payment_required: paymentRequiredHeader(deps, m, '600'), order_ref: 'o-2' });
    await rejects(preparePayment(deps, b.principal, { payment_required: paymentRequiredHeader(deps, m, '401'), order_ref: 'o-3' }), 'POLICY_DENIED', 'over_daily_limit');
    const after = await credit(b);
    assert.equal(after.holds, 1);
    assert.equal(after.available, (before.available as number) - 600);
    assert.equal(await spentToday(b), 600);
    // The refused order_ref is free again: a smaller amount for it goes through.
    assert.equal((await preparePayment(deps, b.principal, { payment_required: paymentRequiredHeader(deps, m, '400'), order_ref: 'o-3' })).reused, false);

    const rich = await onboardBorrower(w, { perPaymentLimit: '5000000000', dailyLimit: '9000000000' });
    const tooMuch = String(Number(deps.env.DEFAULT_CREDIT_LIMIT) + 1);
    await rejects(preparePayment(deps, rich.principal, { payment_required: paymentRequiredHeader(deps, m, tooMuch), order_ref: 'big' }), 'INSUFFICIENT_CREDIT');
    assert.deepEqual(await credit(rich), { available: Number(deps.env.DEFAULT_CREDIT_LIMIT), holds: 0 });
    assert.equal(await spentToday(rich), 0);
    assert.equal(await w.store.c.spendIntents.countDocuments({ borrowerId: rich.borrowerId }), 0);
  });

  it('refuses unknown merchants, a foreign payTo, other networks and missing order refs', async () => {
    const b = await onboardBorrower(w);
    const other = await newMerchant(w, 'Other');
    const pr = decodePaymentRequiredHeader(paymentRequiredHeader(deps, m, '1000', 'x-1')) as unknown as { accepts: Record<string, unknown>[] };
    const entry = pr.accepts[0] as Record<string, unknown>;
    const variant = (patch: Record<string, unknown>) => ({ ...pr, accepts: [{ ...entry, ...patch }] });
    await rejects(preparePayment(deps, b.principal, { payment_required: variant({ payTo: other.payoutAddress }) }), 'POLICY_DENIED', 'recipient_mismatch');
    await rejects(preparePayment(deps, b.principal, { payment_required: variant({ extra: { merchantId: randomUUID(), orderRef: 'x' } }) }), 'POLICY_DENIED', 'unknown_merchant');
    await rejects(preparePayment(deps, b.principal, { payment_required: variant({ network: 'eip155:1' }) }), 'POLICY_DENIED', 'invalid_network');
    await rejects(preparePayment(deps, b.principal, { payment_required: variant({ scheme: 'exact' }) }), 'POLICY_DENIED', 'unsupported_scheme');
    await rejects(preparePayment(deps, b.principal, { payment_required: variant({ extra: { merchantId: m.merchantId } }) }), 'INVALID_INPUT');
    await rejects(preparePayment(deps, b.principal, { payment_required: 'not base64 !!' }), 'INVALID_INPUT');
    assert.equal((await credit(b)).holds, 0);

    const early = await onboardBorrower(w, { until: 'AGENT_KEY_REGISTERED' });
    await rejects(preparePayment(deps, early.principal, { payment_required: paymentRequiredHeader(deps, m, '1000', 'x-2') }), 'STAGE_REQUIRED');
  });

  it('an unused intent expires: its hold and daily spend come back', async function () {
    this.timeout(60_000);
    const b = await onboardBorrower(w);
    const before = await credit(b);
    const signed = await prepareAndSign(w, b, m, '70000', 'expiring', { ttlSeconds: 2, releaseGraceSeconds: 1 });
    assert.equal((await credit(b)).holds, 1);
    const deadline = Date.now() + 30_000;
    let intent = await w.store.c.spendIntents.findOne({ _id: signed.prepared.spend_intent_id });
    while (intent?.status !== 'EXPIRED' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      intent = await w.store.c.spendIntents.findOne({ _id: signed.prepared.spend_intent_id });
    }
    assert.equal(intent?.status, 'EXPIRED');
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await credit(b), before);
    assert.equal(await spentToday(b), 0);
    const res = await capture(w, m, signed.body, signed.idempotencyKey);
    assert.equal(res.status, 422);
    // The order may be prepared again, under a new intent.
    const again = await preparePayment(deps, b.principal, { payment_required: paymentRequiredHeader(deps, m, '70000'), order_ref: 'expiring' });
    assert.notEqual(again.spend_intent_id, signed.prepared.spend_intent_id);
  });

  it('rotate_agent_key revokes the old key: its vouchers verify as agent_key_revoked', async () => {
    const b = await onboardBorrower(w);
    const old = await prepareAndSign(w, b, m, '1000', 'before-rotation');
    const next = generateAgentKeyPair();
    const step = await rotateAgentKey(deps, b.principal, {
      idempotency_key: randomUUID(),
      public_key: encodeKey(next.publicKey),
      per_payment_limit: '5000000',
      daily_limit: '20000000',
      expires_at: Math.floor(Date.now() / 1000) + 3600,
    });
    const done = await signAndSubmit(deps, b.wallet, step);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.result?.revoked_key_ids, [b.agentKeyId]);

    const verify = (body: typeof old.body, requirements: Record<string, unknown>) =>
      call(w, 'POST', '/facilitator/verify', { token: m.apiKey, body: { ...body, paymentRequirements: requirements } });
    const refused = await verify(old.body, old.prepared.payment_requirements);
    assert.equal(refused.json.isValid, false);
    assert.equal(refused.json.invalidReason, 'agent_key_revoked');

    const rotated = { ...b, agentPrivateKey: encodeKey(next.privateKey) };
    const fresh = await prepareAndSign(w, rotated, m, '1000', 'after-rotation');
    const ok = await verify(fresh.body, fresh.prepared.payment_requirements);
    assert.equal(ok.json.isValid, true, JSON.stringify(ok.json));
  });
});
