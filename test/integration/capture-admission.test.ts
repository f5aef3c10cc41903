import assert from 'node:assert/strict';
import type { Context } from 'koa';
import { CaptureAdmission } from '../../src/api/capture-admission.js';
import { ApiError } from '../../src/domain/errors.js';
import { world, type World } from '../helpers/world.js';

const ctx = {} as Context;
const refusal = (err: unknown) => err instanceof ApiError && err.code === 'UNAVAILABLE' && err.status === 503;

/** `seconds` seconds in each of which the whole limit is busy with captures that take 1.2 s (those past a limit that shrank meanwhile are shed). */
async function slowFullSeconds(admission: CaptureAdmission, gate: ReturnType<CaptureAdmission['middleware']>, seconds: number, advance: (ms: number) => void): Promise<void> {
  for (let second = 0; second < seconds; second++) {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const busy = Array.from({ length: admission.currentLimit }, () => gate(ctx, () => held));
    advance(1200);
    release();
    await Promise.allSettled(busy);
  }
}

/** Load shedding reads the shards' reports from the real store; the stack's own shards are 0 and 1. */
describe('capture admission: overload is shed, never queued without bound', function () {
  let w: World;
  const fakeShard = 7;
  before(async function () {
    w = await world();
  });
  after(async function () {
    await w.store.c.shardStatus.deleteOne({ _id: `shard-${fakeShard}` });
  });

  it('answers 503 UNAVAILABLE with Retry-After past the in-flight limit, and admits again once a capture ends', async function () {
    const admission = new CaptureAdmission(w.store.c, { maxInFlight: 2, targetLatencyMs: 60_000, maxBacklog: 1_000_000, shards: 1 });
    const gate = admission.middleware();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = gate(ctx, () => held);
    const second = gate(ctx, () => held);
    let ran = false;
    await assert.rejects(
      gate(ctx, async () => {
        ran = true;
      }),
      (err) => refusal(err) && (err as ApiError).headers?.['Retry-After'] === '1',
    );
    assert.equal(ran, false, 'a shed capture does no work');
    release();
    await Promise.all([first, second]);
    await gate(ctx, async () => {
      ran = true;
    });
    assert.equal(ran, true);
  });

  it('sheds while the shards report a backlog past the limit, and admits once it drains', async function () {
    const admission = new CaptureAdmission(w.store.c, { maxInFlight: 100, targetLatencyMs: 60_000, maxBacklog: 50, shards: fakeShard + 1 });
    const gate = admission.middleware();
    const report = (pending: number) =>
      w.store.c.shardStatus.updateOne({ _id: `shard-${fakeShard}` }, { $set: { shard: fakeShard, pending, at: new Date() } }, { upsert: true });
    await report(500);
    const until = async (shed: boolean) => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const outcome = await gate(ctx, async () => undefined).then(
          () => false,
          (err: unknown) => {
            if (!refusal(err)) throw err;
            return true;
          },
        );
        if (outcome === shed) return;
        if (Date.now() > deadline) assert.fail(`admission never ${shed ? 'shed' : 'admitted'}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await until(true);
    await report(0);
    await until(false);
  });

  it('a capture past the limit waits for a slot up to the queue time: admitted if one frees in time, shed if none does, and the queue is bounded', async function () {
    const admission = new CaptureAdmission(w.store.c, { maxInFlight: 2, maxQueueMs: 300, targetLatencyMs: 60_000, maxBacklog: 1_000_000, shards: 1 });
    const gate = admission.middleware();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const running = [gate(ctx, () => held), gate(ctx, () => held)];
    const order: string[] = [];
    // Two wait (the queue holds as many as the limit); a third finds the queue full and is shed at once.
    const waiting = [gate(ctx, async () => void order.push('a')), gate(ctx, async () => void order.push('b'))];
    await assert.rejects(gate(ctx, async () => void order.push('over')), refusal);
    setTimeout(release, 100);
    await Promise.all([...running, ...waiting]);
    assert.deepEqual(order, ['a', 'b'], 'the waiting captures ran, in order, once slots freed within the queue time');

    let releaseLate!: () => void;
    const heldLate = new Promise<void>((r) => (releaseLate = r));
    const busy = [gate(ctx, () => heldLate), gate(ctx, () => heldLate)];
    const started = Date.now();
    await assert.rejects(gate(ctx, async () => void order.push('late')), (err) => refusal(err) && (err as ApiError).headers?.['Retry-After'] === '1');
    const waited = Date.now() - started;
    assert.ok(waited >= 250 && waited < 2_000, `shed after about the queue time, not at once nor much later: ${waited} ms`);
    assert.ok(!order.includes('late'), 'a shed capture does no work');
    releaseLate();
    await Promise.all(busy);
  });

  it('once a capture found no slot in time, later waiters get the short overload wait for a second, then the full wait again', async function () {
    let skew = 0;
    const admission = new CaptureAdmission(
      w.store.c,
      { maxInFlight: 1, maxQueueMs: 300, overloadQueueMs: 20, targetLatencyMs: 60_000, maxBacklog: 1_000_000, shards: 1 },
      undefined,
      () => Date.now() + skew,
    );
    const gate = admission.middleware();
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const running = gate(ctx, () => held);
    const waitedForShed = async (label: string) => {
      const started = Date.now();
      await assert.rejects(gate(ctx, async () => void order.push(label)), refusal);
      return Date.now() - started;
    };
    const first = await waitedForShed('first');
    assert.ok(first >= 250, `no overload yet: the full wait, ${first} ms`);
    const second = await waitedForShed('second');
    assert.ok(second < 200, `shedding: the overload wait, ${second} ms`);
    skew += 1_000;
    // A second later without a capture shed: a slot freeing after 100 ms is waited for again.
    const late = gate(ctx, async () => void order.push('late'));
    setTimeout(release, 100);
    await Promise.all([running, late]);
    assert.deepEqual(order, ['late'], 'shed captures did no work; the late one ran');
  });

  it('slow captures at low concurrency (a co-located batch end, a GC pause) leave the in-flight limit alone', async function () {
    let now = 1_000_000;
    const admission = new CaptureAdmission(w.store.c, { maxInFlight: 64, targetLatencyMs: 100, maxBacklog: 1_000_000, shards: 1 }, undefined, () => now);
    const gate = admission.middleware();
    // Captures that take 400 ms each, one after another: slow, but nothing queues for a slot.
    for (let i = 0; i < 12; i++) {
      await gate(ctx, async () => {
        now += 400;
      });
    }
    now += 1000;
    await gate(ctx, async () => undefined);
    assert.equal(admission.currentLimit, 64, 'fewer slots would not make these captures faster');
  });

  it('shrinks the in-flight limit while captures are slower than the target and fill it, and grows it back when they are fast', async function () {
    let now = 1_000_000;
    const admission = new CaptureAdmission(w.store.c, { maxInFlight: 64, targetLatencyMs: 100, maxBacklog: 1_000_000, shards: 1 }, undefined, () => now);
    const gate = admission.middleware();
    // Seconds in which the whole limit is busy with captures that take 1.2 s each.
    // Those past a limit that shrank as each second began are shed (no queue time here).
    await slowFullSeconds(admission, gate, 3, (ms) => (now += ms));
    // The next second's first capture closes the slow window (one more cut) and starts a fast one.
    now += 1000;
    await gate(ctx, async () => undefined);
    const shrunk = admission.currentLimit;
    assert.ok(shrunk < 64 && shrunk >= 8, `limit after slow, saturated seconds: ${shrunk}`);
    for (let second = 0; second < 40; second++) {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const busy = Array.from({ length: admission.currentLimit }, () => gate(ctx, () => held));
      release();
      await Promise.all(busy);
      now += 1000;
    }
    assert.equal(admission.currentLimit, 64, 'back to the configured maximum once captures are fast and the limit is used');
  });

  it('cuts the limit in proportion to how far captures overshoot the target: by half at twice the target or more, by a quarter when just above it', async function () {
    const afterOneSlowSecond = async (captureMs: number): Promise<number> => {
      let now = 1_000_000;
      const admission = new CaptureAdmission(w.store.c, { maxInFlight: 64, targetLatencyMs: 100, maxBacklog: 1_000_000, shards: 1 }, undefined, () => now);
      const gate = admission.middleware();
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const busy = Array.from({ length: 64 }, () => gate(ctx, () => held));
      now += captureMs;
      release();
      await Promise.all(busy);
      now += 1000;
      await gate(ctx, async () => undefined);
      return admission.currentLimit;
    };
    // An overload's first second (every slot busy for 1.2 s against a 100 ms target) halves it: 128 slots
    // of captures queued at the store were what made the 4x level's first seconds take ~1 s each.
    assert.equal(await afterOneSlowSecond(1200), 32);
    assert.equal(await afterOneSlowSecond(110), 48);
  });

  it('an overload slower than the target keeps the slots the best recent second needed, instead of spiralling down to the minimum', async function () {
    let now = 1_000_000;
    const admission = new CaptureAdmission(w.store.c, { maxInFlight: 64, targetLatencyMs: 100, maxBacklog: 1_000_000, shards: 1 }, undefined, () => now);
    const gate = admission.middleware();
    // A second in which 200 captures finished: 200/s x the 100 ms target is 20 slots.
    for (let i = 0; i < 200; i++) await gate(ctx, async () => void (now += 4));
    now += 200;
    // Then slow, saturated seconds, each finishing fewer captures than the one before as the limit shrinks.
    await slowFullSeconds(admission, gate, 12, (ms) => (now += ms));
    now += 1000;
    await gate(ctx, async () => undefined);
    assert.equal(admission.currentLimit, 20, 'the floor follows the best second of the last 30, not the slowest');
  });

  it('after an overload, a few quiet seconds of fast captures restore the limit, and many slow ones never cut it below the floor', async function () {
    let now = 1_000_000;
    const admission = new CaptureAdmission(w.store.c, { maxInFlight: 64, targetLatencyMs: 100, maxBacklog: 1_000_000, shards: 1 }, undefined, () => now);
    const gate = admission.middleware();
    await slowFullSeconds(admission, gate, 12, (ms) => (now += ms));
    now += 1000;
    await gate(ctx, async () => undefined);
    assert.equal(admission.currentLimit, 8, 'twelve slow, saturated seconds end at the floor, not below it');
    // Normal load afterwards: a handful of fast captures a second, far below the limit.
    for (let second = 0; second < 10; second++) {
      for (let i = 0; i < 3; i++) await gate(ctx, async () => void (now += 5));
      now += 1000;
    }
    await gate(ctx, async () => undefined);
    assert.equal(admission.currentLimit, 64, 'a burst after the overload finds the whole limit again');
  });
});
