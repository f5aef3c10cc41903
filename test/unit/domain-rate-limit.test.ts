import assert from 'node:assert/strict';
import fc from 'fast-check';
import { admitted, pickSlot, refused, slotWindow, type RateDecision, type RatePolicy } from '../../src/domain/rate-limit.js';

/** The store's claim loop over an in-memory set of slots: what consumeRate does with unique inserts. */
function consume(taken: Set<number>, nowMs: number, policy: RatePolicy, spread = 1, random: () => number = () => 0): RateDecision {
  const window = slotWindow(nowMs, policy);
  const slot = pickSlot(window, taken, spread, random);
  if (slot === null) return refused(window, nowMs, policy);
  taken.add(slot);
  return admitted(window, taken, nowMs, policy);
}

describe('domain: rate-limit slots', function () {
  const policy: RatePolicy = { perMinute: 120, burst: 20 };
  const interval = 60_000 / policy.perMinute;
  const t0 = 1_700_000_000_000;

  it('admits the burst at once, refuses the next with Retry-After, and refills one per interval', function () {
    const taken = new Set<number>();
    const answers = Array.from({ length: policy.burst }, () => consume(taken, t0, policy));
    assert.ok(answers.every((a) => a.allowed));
    assert.deepEqual(answers.map((a) => a.remaining), Array.from({ length: policy.burst }, (_, i) => policy.burst - 1 - i));
    assert.equal(answers.at(-1)?.resetSeconds, Math.ceil((policy.burst * interval) / 1000));
    const no = consume(taken, t0, policy);
    assert.deepEqual(no, { allowed: false, limit: 20, remaining: 0, resetSeconds: 10, retryAfterSeconds: 1 });
    assert.equal(consume(taken, t0 + interval - 1, policy).allowed, false);
    assert.equal(consume(taken, t0 + interval, policy).allowed, true);
    assert.equal(consume(taken, t0 + interval, policy).allowed, false);
  });

  it('is a fresh bucket again once idle for burst intervals', function () {
    const taken = new Set<number>();
    for (let i = 0; i < policy.burst; i++) consume(taken, t0, policy);
    const later = t0 + policy.burst * interval;
    assert.equal(Array.from({ length: policy.burst }, () => consume(taken, later, policy)).filter((a) => a.allowed).length, policy.burst);
  });

  it('whatever slots are picked, never admits more than burst + one per elapsed interval, and refuses only a full window', function () {
    fc.assert(
      fc.property(
        fc.record({ perMinute: fc.integer({ min: 1, max: 600 }), burst: fc.integer({ min: 1, max: 30 }) }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 0.999, noNaN: true })), { maxLength: 120 }),
        (p, arrivals) => {
          const taken = new Set<number>();
          const sorted = [...arrivals].sort((a, b) => a[0] - b[0]);
          const admittedAt: number[] = [];
          for (const [offset, spread, r] of sorted) {
            const now = t0 + offset;
            const window = slotWindow(now, p);
            const inWindow = [...taken].filter((k) => k >= window.first && k <= window.last).length;
            const d = consume(taken, now, p, spread, () => r);
            if (d.allowed) admittedAt.push(now);
            else assert.equal(inWindow, p.burst, 'refused while a slot was free');
          }
          const step = 60_000 / p.perMinute;
          for (let i = 0; i < admittedAt.length; i++) {
            for (let j = i; j < admittedAt.length; j++) {
              const span = admittedAt[j]! - admittedAt[i]!;
              assert.ok(j - i + 1 <= p.burst + Math.ceil(span / step), `${j - i + 1} admitted within ${span} ms`);
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
