import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'koa';
import { CaptureAdmission } from '../../src/api/capture-admission.js';
import { CAPTURE_PATH, withEarlyShed } from '../../src/api/early-shed.js';
import { createLogger } from '../../src/observability/logger.js';
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

describe('early shed: a refused capture is answered before Koa, in the one error shape', function () {
  let w: World;
  before(async function () {
    w = await world();
  });

  it('answers 503 UNAVAILABLE with Retry-After without reading the body or reaching the app, and the connection stays usable', async function () {
    const admission = new CaptureAdmission(w.store.c, { maxInFlight: 1, targetLatencyMs: 60_000, maxBacklog: 1_000_000, shards: 1 });
    const gate = admission.middleware();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const reached: string[] = [];
    // The app behind the door: captures pass the admission middleware, as in src/api/facilitator/routes.ts.
    const app = withEarlyShed(
      (req, res) => {
        reached.push(`${req.method} ${req.url}`);
        const work = req.method === 'POST' && req.url === CAPTURE_PATH ? gate(ctx, () => held) : Promise.resolve();
        work.then(
          () => res.end('app'),
          () => res.writeHead(503).end('app refused'),
        );
      },
      { admission, logger: createLogger('silent', { service: 'test' }) },
    );
    const server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const first = fetch(`${base}${CAPTURE_PATH}`, { method: 'POST', body: '{}' });
      while (reached.length === 0) await new Promise((r) => setTimeout(r, 5));
      for (const path of [CAPTURE_PATH, `${CAPTURE_PATH}?x=1`]) {
        const shed = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(50_000) }) });
        assert.equal(shed.status, 503);
        assert.equal(shed.headers.get('retry-after'), '1');
        assert.equal(shed.headers.get('cache-control'), 'no-store');
        assert.match(shed.headers.get('content-type') ?? '', /^application\/json/);
        const body = (await shed.json()) as { error: { code: string; message: string; requestId: string } };
        assert.equal(body.error.code, 'UNAVAILABLE');
        assert.match(body.error.requestId, /^req_/);
        assert.equal(shed.headers.get('x-request-id'), body.error.requestId);
        assert.match(body.error.message, /Retry after 1 seconds/);
      }
      // Not the capture route: the app answers, on the same kept-alive connection.
      assert.equal(await (await fetch(`${base}${CAPTURE_PATH}s`, { method: 'POST', body: '{}' })).text(), 'app');
      assert.equal(await (await fetch(`${base}${CAPTURE_PATH}`)).text(), 'app', 'only POST is shed at the door');
      assert.deepEqual(reached, [`POST ${CAPTURE_PATH}`, `POST ${CAPTURE_PATH}s`, `GET ${CAPTURE_PATH}`], 'shed captures never reached the app');
      release();
      assert.equal(await (await first).text(), 'app');
      assert.equal(await (await fetch(`${base}${CAPTURE_PATH}`, { method: 'POST', body: '{}' })).text(), 'app', 'admitted again once the capture ended');
    } finally {
      app.stop();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
