import assert from 'node:assert/strict';
import fc from 'fast-check';
import { evaluateAgentPolicy, spendDayId, utcDay } from '../../src/domain/agent-policy.js';
import { normalizeHandle } from '../../src/domain/handles.js';
import { toolFingerprint } from '../../src/agents/idempotency.js';
import { registerAgentKeyInput, parseToolInput, claimHandleInput } from '../../src/agents/schemas.js';
import { ToolError } from '../../src/domain/tool-errors.js';

const grant = { perPaymentLimit: 100n, dailyLimit: 250n, expiresAt: 2_000 };

describe('agents: grant policy (pure)', () => {
  it('allows a payment within every limit, including exactly at them', () => {
    assert.deepEqual(evaluateAgentPolicy({ grant, amount: 100n, spentToday: 150n, nowSeconds: 1_999 }), { ok: true });
  });

  it('checks expiry, then the per-payment limit, then the daily limit', () => {
    const deny = (amount: bigint, spentToday: bigint, nowSeconds: number) => evaluateAgentPolicy({ grant, amount, spentToday, nowSeconds });
    assert.deepEqual(deny(500n, 500n, 2_000), { ok: false, reason: 'grant_expired' });
    assert.deepEqual(deny(101n, 500n, 1_000), { ok: false, reason: 'over_per_payment_limit' });
    assert.deepEqual(deny(100n, 151n, 1_000), { ok: false, reason: 'over_daily_limit' });
  });

  it('never allows what would take the day past its limit', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 400n }), fc.bigInt({ min: 0n, max: 400n }), (amount, spent) => {
        const v = evaluateAgentPolicy({ grant, amount, spentToday: spent, nowSeconds: 0 });
        assert.equal(v.ok, amount <= grant.perPaymentLimit && spent + amount <= grant.dailyLimit);
      }),
    );
  });

  it('counts days in UTC', () => {
    assert.equal(utcDay(Date.UTC(2026, 0, 31, 23, 59, 59)), '2026-01-31');
    assert.equal(utcDay(Date.UTC(2026, 1, 1, 0, 0, 0)), '2026-02-01');
    assert.equal(spendDayId('k', '2026-02-01'), 'k:2026-02-01');
  });
});

describe('agents: handles and tool inputs', () => {
  it('normalises handles and refuses bad or reserved ones', () => {
    assert.deepEqual(normalizeHandle('  Alice_01 '), { ok: true, handle: 'alice_01' });
    for (const bad of ['ab', '1abc', '-abc', 'a'.repeat(33), 'al ice', 'alice!', 'ålice']) assert.equal(normalizeHandle(bad).ok, false, bad);
    assert.deepEqual(normalizeHandle('Admin'), { ok: false, reason: 'reserved' });
  });

  it('fingerprints arguments independent of key order, wait_seconds and the key itself', () => {
    const a = toolFingerprint('t', { amount: '5', wait_seconds: 3, idempotency_key: 'x' });
    const b = toolFingerprint('t', { idempotency_key: 'y', amount: '5' });
    assert.equal(a, b);
    assert.notEqual(a, toolFingerprint('t', { amount: '6' }));
    assert.notEqual(a, toolFingerprint('u', { amount: '5' }));
  });

  it('refuses malformed tool input with INVALID_INPUT and a field list', () => {
    const base = { idempotency_key: crypto.randomUUID(), public_key: 'A'.repeat(43), per_payment_limit: '10', daily_limit: '100', expires_at: 2_000_000_000 };
    assert.equal(parseToolInput(registerAgentKeyInput, base).per_payment_limit, '10');
    for (const patch of [{ idempotency_key: 'not-a-uuid' }, { public_key: 'short' }, { per_payment_limit: '101' }, { daily_limit: '0' }, { wait_seconds: 26 }]) {
      assert.throws(
        () => parseToolInput(registerAgentKeyInput, { ...base, ...patch }),
        (e: unknown) => e instanceof ToolError && e.code === 'INVALID_INPUT' && Array.isArray(e.details.fields),
        JSON.stringify(patch),
      );
    }
    assert.throws(() => parseToolInput(claimHandleInput, { idempotency_key: crypto.randomUUID(), handle: 'x' }), ToolError);
  });
});
