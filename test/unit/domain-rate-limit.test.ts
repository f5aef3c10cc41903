import assert from 'node:assert/strict';
import fc from 'fast-check';
import { admittedOn, claimSlot, refused, SEQUENTIAL_PROBES, slotWindow, type RateDecision, type RatePolicy, type SlotHint } from '../../src/domain/rate-limit.js';

/** A bucket's slots as a set; tryClaim is the unique insert consumeRate does, counted. */
class Slots {
  readonly taken = new Set<number>();
  probes = 0;
  async tryClaim(slot: number, yieldFirst = false): Promise<boolean> {
    this.probes += 1;
    if (yieldFirst) await new Promise((r) => setImmediate(r));
    if (this.taken.has(slot)) return false;
    this.taken.add(slot);
    return true;
  }
}

/** consumeRate over `slots`, for a process whose hint is `hint`. */
async function consume(slots: Slots, hint: SlotHint, nowMs: number, policy: RatePolicy, yieldFirst = false): Promise<RateDecision> {
  const window = slotWindow(nowMs, policy);
  const slot = await claimSlot(window, hint, (k) => slots.tryClaim(k, yieldFirst));
  return slot === null ? refused(window, nowMs, policy) : admittedOn(window, slot, nowMs, policy);
}

describe('domain: rate-limit slots', function () {
  const policy: RatePolicy = { perMinute: 120, burst: 20 };
  const interval = 60_000 / policy.perMinute;
  const t0 = 1_700_000_000_000;

  it('admits the burst at once, refuses the next with Retry-After, and refills one per interval', async function () {
    const slots = new Slots();
    const hint = { next: 0 };
    const answers: RateDecision[] = [];
    for (let i = 0; i < policy.burst; i++) answers.push(await consume(slots, hint, t0, policy));
    assert.ok(answers.every((a) => a.allowed));
    assert.deepEqual(answers.map((a) => a.remaining), Array.from({ length: policy.burst }, (_, i) => policy.burst - 1 - i));
    assert.equal(answers.at(-1)?.resetSeconds, Math.ceil((policy.burst * interval) / 1000));
    assert.equal(slots.probes, policy.burst, 'one insert per admitted request');
    const no = await consume(slots, hint, t0, policy);
    assert.deepEqual(no, { allowed: false, limit: 20, remaining: 0, resetSeconds: 10, retryAfterSeconds: 1 });
    assert.equal((await consume(slots, hint, t0 + interval - 1, policy)).allowed, false);
    assert.equal((await consume(slots, hint, t0 + interval, policy)).allowed, true);
    assert.equal((await consume(slots, hint, t0 + interval, policy)).allowed, false);
    assert.equal(slots.probes, policy.burst + 1, 'a refusal this process can foresee costs no insert');
  });

  it('is a fresh bucket again once idle for burst intervals', async function () {
    const slots = new Slots();
    const hint = { next: 0 };
    for (let i = 0; i < policy.burst; i++) await consume(slots, hint, t0, policy);
    const later = t0 + policy.burst * interval;
    const again = [];
    for (let i = 0; i < policy.burst; i++) again.push(await consume(slots, hint, later, policy));
    assert.equal(again.filter((a) => a.allowed).length, policy.burst);
  });

  it('concurrent requests of one process each try their own slot; two processes at once admit exactly the burst', async function () {
    const one = new Slots();
    const hint = { next: 0 };
    const answers = await Promise.all(Array.from({ length: 30 }, () => consume(one, hint, t0, policy, true)));
    assert.equal(answers.filter((a) => a.allowed).length, policy.burst);
    assert.equal(one.probes, policy.burst, 'no two requests of a process tried the same slot');

    const shared = new Slots();
    const hints = [{ next: 0 }, { next: 0 }];
    const both = await Promise.all(Array.from({ length: 60 }, (_, i) => consume(shared, hints[i % 2]!, t0, policy, true)));
    assert.equal(both.filter((a) => a.allowed).length, policy.burst);
    assert.ok(shared.probes <= 2 * policy.burst, `${shared.probes} inserts`);
  });

  it('a process far behind a huge bucket catches up in few probes and never takes a taken slot', async function () {
    const huge: RatePolicy = { perMinute: 60, burst: 100_000 };
    const slots = new Slots();
    const busy = { next: 0 };
    for (let i = 0; i < 50_000; i++) await consume(slots, busy, t0, huge);
    slots.probes = 0;
    const late = await consume(slots, { next: 0 }, t0, huge);
    assert.equal(late.allowed, true);
    assert.equal(slots.taken.size, 50_001);
    assert.ok(slots.probes <= SEQUENTIAL_PROBES + 20, `${slots.probes} probes`);
  });

  it('whatever the interleaving of processes, never admits more than burst + one per elapsed interval, and refuses only a full window', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ perMinute: fc.integer({ min: 1, max: 600 }), burst: fc.integer({ min: 1, max: 30 }) }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 0, max: 2 })), { maxLength: 120 }),
        async (p, arrivals) => {
          const slots = new Slots();
          const hints = [{ next: 0 }, { next: 0 }, { next: 0 }];
          const sorted = [...arrivals].sort((a, b) => a[0] - b[0]);
          const admittedAt: number[] = [];
          for (const [offset, process] of sorted) {
            const now = t0 + offset;
            const window = slotWindow(now, p);
            const inWindow = [...slots.taken].filter((k) => k >= window.first && k <= window.last).length;
            const d = await consume(slots, hints[process]!, now, p);
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
      { numRuns: 300 },
    );
  });
});
