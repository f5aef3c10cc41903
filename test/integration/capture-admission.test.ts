import assert from 'node:assert/strict';
import type { Context } from 'koa';
import { CaptureAdmission } from '../../src/api/capture-admission.js';
import { ApiError } from '../../src/domain/errors.js';
import { world, type World } from '../helpers/world.js';

const ctx = {} as Context;
const refusal = (err: unknown) => err instanceof ApiError && err.code === 'UNAVAILABLE' && err.status === 503;

/** Load shedding reads the shards' reports from the real store; the stack's own shards are 0 and 1. */
describe('capture admission: overload is shed at once, never queued', function () {
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

  it('shrinks the in-flight limit while captures are slower than the target, and grows it back when they are fast', async function () {
    let now = 1_000_000;
    const admission = new CaptureAdmission(w.store.c, { maxInFlight: 64, targetLatencyMs: 100, maxBacklog: 1_000_000, shards: 1 }, undefined, () => now);
    const gate = admission.middleware();
    // Captures that take 400 ms each, one after another, for a few seconds of the fake clock.
    for (let i = 0; i < 12; i++) {
      await gate(ctx, async () => {
        now += 400;
      });
    }
    // The next second's first capture closes the slow window (one more cut) and starts a fast one.
    now += 1000;
    await gate(ctx, async () => undefined);
    const shrunk = admission.currentLimit;
    assert.ok(shrunk < 64 && shrunk >= 4, `limit after slow seconds: ${shrunk}`);
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
});
