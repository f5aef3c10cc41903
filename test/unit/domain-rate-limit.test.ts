import assert from 'node:assert/strict';
import fc from 'fast-check';
import { acquireSlot, BLOCK_SPAN_MS, blockSize, MAX_BLOCK, newBucketState, type BucketState } from '../../src/domain/rate-limit-blocks.js';
import { SEQUENTIAL_PROBES, slotWindow, type RateDecision, type RatePolicy } from '../../src/domain/rate-limit.js';

/** A bucket's slots as a set; claim is the insert command consumeRate sends (one document per slot), counted. */
class Slots {
  readonly taken = new Set<number>();
  /** Insert commands sent. */
  commands = 0;
  /** Slot documents tried. */
  tried = 0;
  async claim(slots: number[], yieldFirst = false): Promise<boolean[]> {
    this.commands += 1;
    this.tried += slots.length;
    if (yieldFirst) await new Promise((r) => setImmediate(r));
    return slots.map((slot) => {
      if (this.taken.has(slot)) return false;
      this.taken.add(slot);
      return true;
    });
  }
}

/** consumeRate over `slots`, for a process whose knowledge of the bucket is `state`. */
function consume(slots: Slots, state: BucketState, nowMs: number, policy: RatePolicy, yieldFirst = false): Promise<RateDecision> {
  return acquireSlot(state, nowMs, policy, (k) => slots.claim(k, yieldFirst));
}

describe('domain: rate-limit slots', function () {
  const policy: RatePolicy = { perMinute: 120, burst: 20 };
  const interval = 60_000 / policy.perMinute;
  const t0 = 1_700_000_000_000;

  it('admits the burst at once, refuses the next with Retry-After, and refills one per interval', async function () {
    const slots = new Slots();
    const state = newBucketState();
    const answers: RateDecision[] = [];
    for (let i = 0; i < policy.burst; i++) answers.push(await consume(slots, state, t0, policy));
    assert.ok(answers.every((a) => a.allowed));
    assert.deepEqual(answers.map((a) => a.remaining), Array.from({ length: policy.burst }, (_, i) => policy.burst - 1 - i));
    assert.equal(answers.at(-1)?.resetSeconds, Math.ceil((policy.burst * interval) / 1000));
    assert.equal(slots.commands, policy.burst, 'one insert per request: a process faster than the rate claims one by one');
    const commands = slots.commands;
    const no = await consume(slots, state, t0, policy);
    assert.deepEqual(no, { allowed: false, limit: 20, remaining: 0, resetSeconds: 10, retryAfterSeconds: 1 });
    assert.equal(slots.commands, commands, 'a refusal this process can foresee costs no insert');
    assert.equal((await consume(slots, state, t0 + interval - 1, policy)).allowed, false);
    assert.equal((await consume(slots, state, t0 + interval, policy)).allowed, true);
    assert.equal((await consume(slots, state, t0 + interval, policy)).allowed, false);
    assert.equal(slots.commands, commands + 1);
  });

  it('is a fresh bucket again once idle for burst intervals', async function () {
    const slots = new Slots();
    const state = newBucketState();
    for (let i = 0; i < policy.burst; i++) await consume(slots, state, t0, policy);
    const later = t0 + policy.burst * interval;
    const again = [];
    for (let i = 0; i < policy.burst; i++) again.push(await consume(slots, state, later, policy));
    assert.equal(again.filter((a) => a.allowed).length, policy.burst);
  });

  it('concurrent requests of one process never try the same slot; two processes at once admit exactly the burst', async function () {
    const one = new Slots();
    const state = newBucketState();
    const answers = await Promise.all(Array.from({ length: 30 }, () => consume(one, state, t0, policy, true)));
    assert.equal(answers.filter((a) => a.allowed).length, policy.burst);
    assert.equal(one.tried, policy.burst, 'no two requests of a process tried the same slot');
    assert.deepEqual(state.held, [], 'nothing left over while requests were refused');

    const shared = new Slots();
    const states = [newBucketState(), newBucketState()];
    const both = await Promise.all(Array.from({ length: 60 }, (_, i) => consume(shared, states[i % 2]!, t0, policy, true)));
    assert.equal(both.filter((a) => a.allowed).length, policy.burst);
    assert.ok(shared.tried <= 2 * policy.burst, `${shared.tried} slots tried`);
  });

  it('a process far behind a huge bucket catches up in few probes and never takes a taken slot', async function () {
    const huge: RatePolicy = { perMinute: 60, burst: 100_000 };
    const slots = new Slots();
    const busy = newBucketState();
    for (let i = 0; i < 50_000; i++) await consume(slots, busy, t0, huge);
    slots.commands = 0;
    const late = await consume(slots, newBucketState(), t0, huge);
    assert.equal(late.allowed, true);
    assert.equal(slots.taken.size, 50_001 + busy.held.length);
    assert.ok(slots.commands <= SEQUENTIAL_PROBES + 20, `${slots.commands} probes`);
  });

  it('block size: 1 without a pace or faster than the rate, else as many as the pace brings within the span, at most MAX_BLOCK and a quarter of the burst', function () {
    const big: RatePolicy = { perMinute: 6000, burst: 400 };
    assert.equal(blockSize(big, undefined), 1);
    assert.equal(blockSize(big, BLOCK_SPAN_MS), 1);
    assert.equal(blockSize(big, BLOCK_SPAN_MS / 4), 4);
    assert.equal(blockSize(big, 10), MAX_BLOCK);
    assert.equal(blockSize(big, 9), 1, 'faster than one per 10 ms interval');
    assert.equal(blockSize(big, 0), 1);
    assert.equal(blockSize({ perMinute: 6000, burst: 10 }, 10), 2);
    assert.equal(blockSize({ perMinute: 6000, burst: 3 }, 10), 1);
    assert.equal(blockSize({ perMinute: 120, burst: 20 }, 500), 5, 'a quarter of the burst');
    assert.equal(blockSize({ perMinute: 120, burst: 400 }, 2 * BLOCK_SPAN_MS / 3), 1, 'one request due within the span');
  });

  it('a steady pace costs about one insert per MAX_BLOCK requests; an idle bucket claims one slot again', async function () {
    const steady: RatePolicy = { perMinute: 1200, burst: 40 };
    const slots = new Slots();
    const state = newBucketState();
    const answers: RateDecision[] = [];
    for (let i = 0; i < 41; i++) answers.push(await consume(slots, state, t0 + i * 100, steady));
    assert.ok(answers.every((a) => a.allowed));
    assert.equal(slots.commands, 5, 'the first request alone, then a block of 10 per 10 requests');
    assert.equal(state.held.length, 0);
    assert.ok(answers.every((a) => a.remaining >= steady.burst - MAX_BLOCK && a.remaining < steady.burst), answers.map((a) => a.remaining).join(','));

    const tried = slots.tried;
    assert.equal((await consume(slots, state, t0 + 60_000, steady)).allowed, true);
    assert.equal(slots.tried, tried + 1, 'after a pause, one slot');
  });

  it('a merchant sending in rounds with pauses between: the pause does not shrink the next round\'s blocks', async function () {
    const unthrottled: RatePolicy = { perMinute: 1_000_000, burst: 100_000 };
    const slots = new Slots();
    const state = newBucketState();
    let now = t0;
    let requests = 0;
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 15; i++, requests++) {
        now += 1000 + (i % 3) * 20 - 20;
        assert.equal((await consume(slots, state, now, unthrottled)).allowed, true);
      }
      now += 20_000;
    }
    // Averaged into the pace, a 20 s pause kept blocks at one slot for most of the next round (31 inserts).
    assert.ok(slots.commands <= requests * 0.35, `${slots.commands} insert commands for ${requests} requests`);
  });

  it('bursty arrivals at a steady mean pace (Poisson, as merchants send) use most of each block', async function () {
    const unthrottled: RatePolicy = { perMinute: 1_000_000, burst: 100_000 };
    const slots = new Slots();
    const state = newBucketState();
    let seed = 7;
    const uniform = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    let now = t0;
    for (let i = 0; i < 400; i++) {
      now += -Math.log(1 - uniform()) * 500; // exponential gaps, 2 requests a second
      assert.equal((await consume(slots, state, now, unthrottled)).allowed, true);
    }
    assert.ok(slots.commands <= 400 / 6, `${slots.commands} insert commands for 400 requests`);
  });

  it('slots a process reserved and does not use are refused to others, at most a block less one, until they pass', async function () {
    const p: RatePolicy = { perMinute: 600, burst: 60 };
    const step = 60_000 / p.perMinute;
    const k = blockSize(p, 200);
    assert.ok(k > 1 && k <= MAX_BLOCK && k <= p.burst / 4);
    const slots = new Slots();
    const a = newBucketState();
    await consume(slots, a, t0, p);
    const stopped = t0 + 200;
    await consume(slots, a, stopped, p);
    assert.equal(a.held.length, k - 1, 'a claimed a block, then stopped');
    const reserved = [...slots.taken];

    const b = newBucketState();
    const claims = new Slots();
    const bClaims = (k: number[]) => slots.claim(k).then((won) => (k.forEach((slot, i) => won[i] && claims.taken.add(slot)), won));
    let admitted = 0;
    for (let i = 0; i < 3 * p.burst; i++) if ((await acquireSlot(b, stopped, p, bClaims)).allowed) admitted++;
    assert.equal(admitted, p.burst - 1 - (k - 1), "the burst less a's second request (its first slot has passed) and its unused block");

    // BLOCK_SPAN_MS and an interval later, a's block has passed: b gets every slot it did not take itself.
    const passed = stopped + BLOCK_SPAN_MS + step;
    const window = slotWindow(passed, p);
    assert.ok(reserved.every((k) => k < window.first), "a's slots have passed");
    const bStill = [...claims.taken].filter((k) => k >= window.first && k <= window.last).length;
    let later = 0;
    for (let i = 0; i < 3 * p.burst; i++) if ((await acquireSlot(b, passed, p, bClaims)).allowed) later++;
    assert.equal(later, p.burst - bStill);
  });

  it('whatever the interleaving of processes, never admits more than burst + one per elapsed interval, and refuses only a full window', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ perMinute: fc.integer({ min: 1, max: 600 }), burst: fc.integer({ min: 1, max: 60 }) }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 0, max: 2 })), { maxLength: 200 }),
        async (p, arrivals) => {
          const slots = new Slots();
          const states = [newBucketState(), newBucketState(), newBucketState()];
          const sorted = [...arrivals].sort((a, b) => a[0] - b[0]);
          const admittedAt: number[] = [];
          for (const [offset, process] of sorted) {
            const now = t0 + offset;
            const window = slotWindow(now, p);
            const inWindow = [...slots.taken].filter((k) => k >= window.first && k <= window.last).length;
            const d = await consume(slots, states[process]!, now, p);
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
