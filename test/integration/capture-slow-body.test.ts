import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import { Registry } from 'prom-client';
import { CaptureAdmission } from '../../src/api/capture-admission.js';
import { CAPTURE_ROUTE, shedCapturesEarly } from '../../src/api/early-shed.js';
import { errorMiddleware } from '../../src/http/errors.js';
import { observeRequests } from '../../src/http/observe-requests.js';
import { requestIdMiddleware } from '../../src/http/request-id.js';
import type { Logger } from '../../src/observability/logger.js';
import { apiMetrics } from '../../src/observability/metrics.js';
import { startExtraApi, type ExtraApi } from '../helpers/extra-api.js';
import { metricSum } from '../helpers/metrics.js';
import { capture, newBorrower, newMerchant, newVoucher, UNTHROTTLED, world, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet };

/** A capture whose client sent its headers and the start of its body, then trickles a byte of whitespace every 200 ms. */
interface SlowCapture {
  socket: Socket;
  /** Everything the server answered so far ('' while it has not answered). */
  answered: () => string;
  /** Sends the rest of the body at once and resolves with the answer's status line. */
  finish: () => Promise<string>;
  stop: () => void;
}

function slowCapture(origin: string, apiKey: string, body: string, sentAtOnce = 16): SlowCapture {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => undefined);
  const padding = 64;
  socket.write(
    [
      `POST ${CAPTURE_ROUTE} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      `Authorization: Bearer ${apiKey}`,
      'Content-Type: application/json',
      `Idempotency-Key: ${randomUUID()}`,
      `Content-Length: ${Buffer.byteLength(body) + padding}`,
      '',
      '',
    ].join('\r\n') + body.slice(0, sentAtOnce),
  );
  let trickled = 0;
  const trickle = setInterval(() => {
    if (trickled < padding - 1) socket.write(' ', () => trickled++);
  }, 200);
  return {
    socket,
    answered: () => received,
    finish: async () => {
      clearInterval(trickle);
      await new Promise((r) => setTimeout(r, 250)); // the last trickled byte is written
      socket.write(body.slice(sentAtOnce) + ' '.repeat(padding - trickled));
      const deadline = Date.now() + 30_000;
      while (!received.includes('\r\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return received.split('\r\n')[0] ?? '';
    },
    stop: () => {
      clearInterval(trickle);
      socket.destroy();
    },
  };
}

describe('capture admission: a slot only after auth and a complete body, and at most a merchant share', function () {
  let w: World;
  before(async function () {
    w = await world();
  });

  describe('a slow-body flood from one merchant', function () {
    const LIMIT = 4;
    const FLOOD = 12;
    let api: ExtraApi;
    let onApi: World;
    let flooder: TestMerchant;
    let other: TestMerchant;
    let borrower: TestBorrower;
    const flood: SlowCapture[] = [];

    before(async function () {
      this.timeout(120_000);
      // A process of its own with 4 slots, a merchant share of 2, and no queue: before issue 42 the
      // flood's first 4 captures took every slot before their merchant or body was known.
      [api, flooder, other, borrower] = await Promise.all([
        startExtraApi('api-slow-body', { CAPTURE_MAX_IN_FLIGHT: String(LIMIT), CAPTURE_MERCHANT_SHARE: '0.5', CAPTURE_MAX_QUEUE_MS: '0', CAPTURE_TARGET_LATENCY_MS: '60000' }),
        newMerchant(w, 'Slow-body flooder', { rateLimits: UNTHROTTLED }),
        newMerchant(w, 'Slow-body bystander', { rateLimits: UNTHROTTLED }),
        newBorrower(w),
      ]);
      onApi = { ...w, baseUrl: api.baseUrl };
    });
    after(async function () {
      for (const c of flood) c.stop();
      await api?.stop();
    });

    it('holds connections, never capture slots: both merchants capture (200) while it is open, and a slow body that completes is admitted', async function () {
      this.timeout(60_000);
      const completing = await newVoucher(w, flooder, borrower, '1100');
      flood.push(slowCapture(api.origin, flooder.apiKey, JSON.stringify(completing.captureBody)));
      for (let i = 1; i < FLOOD; i++) flood.push(slowCapture(api.origin, flooder.apiKey, '{"x402Version":2,"paymentPayload":{"x402Version":2,"accepted":{}}}'));
      // Long enough for every flood request's headers to be parsed and its merchant authenticated.
      await new Promise((r) => setTimeout(r, 1_000));

      for (const [m, label] of [[other, 'another merchant'], [flooder, 'the flooding merchant'], [other, 'another merchant again'], [flooder, 'the flooding merchant again']] as const) {
        const v = await newVoucher(w, m, borrower, '1000');
        const res = await capture(onApi, m, v.captureBody, v.idempotencyKey);
        assert.equal(res.status, 200, `${label}: ${JSON.stringify(res.json)}`);
        assert.equal(res.json.receipt.status, 'QUEUED');
      }

      const metrics = await (await fetch(`${api.origin}/metrics`)).text();
      assert.equal(metricSum(metrics, 'x402_captures_in_flight'), 0, 'no slot is held while every flood body is still arriving');
      assert.equal(metricSum(metrics, 'x402_captures_shed_total'), 0, 'nothing was shed');
      assert.equal(metricSum(metrics, 'x402_captures_total', 'outcome="queued"'), 4);
      for (const [i, c] of flood.entries()) assert.equal(c.answered(), '', `flood connection ${i} is still open and unanswered`);

      assert.match(await flood[0]!.finish(), /^HTTP\/1\.1 200 /, 'its body complete, the slow capture is admitted and captured');
    });
  });

  describe("one merchant's share of the in-flight limit", function () {
    let server: Server;
    let url: string;
    const metrics = apiMetrics(new Registry());
    let admission: CaptureAdmission;
    /** The captures each merchant's handler holds until released. */
    const holds = new Map<string, (() => void)[]>();

    before(async function () {
      // 8 slots, a quarter each: at most 2 captures per merchant.
      admission = new CaptureAdmission(w.store.c, { maxInFlight: 8, merchantShare: 0.25, maxQueueMs: 0, targetLatencyMs: 60_000, maxBacklog: 1_000_000, shards: 1 }, metrics);
      const app = new Koa();
      app.silent = true;
      app.use(requestIdMiddleware);
      app.use(observeRequests(quiet, metrics));
      app.use(errorMiddleware(quiet));
      const authenticated = (ctx: Context, next: Next) => {
        ctx.state.merchant = { merchantId: ctx.get('x-merchant') };
        return next();
      };
      const router = new Router();
      router.post(CAPTURE_ROUTE, authenticated, admission.middleware(), async (ctx) => {
        const merchant = ctx.get('x-merchant');
        await new Promise<void>((resolve) => holds.set(merchant, [...(holds.get(merchant) ?? []), resolve]));
        ctx.body = { merchant };
      });
      app.use(router.routes());
      server = createServer(shedCapturesEarly(app.callback(), admission, { logger: quiet, metrics, serverTiming: false }));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${CAPTURE_ROUTE}`;
    });
    after(function () {
      server?.close();
    });

    const post = (merchant: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-merchant': merchant }, body: '{}' });
    const release = (merchant: string) => {
      for (const r of holds.get(merchant) ?? []) r();
      holds.delete(merchant);
    };
    const held = async (n: number) => {
      const deadline = Date.now() + 5_000;
      while (admission.inFlightCount !== n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.equal(admission.inFlightCount, n);
    };

    it('a merchant past its share is shed (503, Retry-After, its limit named) while other merchants are admitted', async function () {
      assert.equal(admission.merchantLimit, 2);
      const busyA = [post('A'), post('A')];
      await held(2);
      const refused = await post('A');
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '1');
      const body = (await refused.json()) as { error: Record<string, unknown> };
      assert.equal(body.error.code, 'UNAVAILABLE');
      assert.equal(body.error.merchantInFlightLimit, 2);
      assert.match(body.error.message as string, /This merchant already has 2 captures in progress here/);
      assert.equal(body.error.requestId, refused.headers.get('x-request-id'));

      const busyB = [post('B'), post('B')];
      await held(4);
      assert.equal(admission.heldBy('A'), 2);
      assert.equal(admission.heldBy('B'), 2);
      assert.equal(await metrics.capturesInFlight.get().then((g) => g.values[0]?.value), 4, 'x402_captures_in_flight');

      release('A');
      assert.deepEqual(await Promise.all(busyA.map((r) => r.then((x) => x.status))), [200, 200]);
      await held(2);
      const again = post('A');
      await held(3);
      release('A');
      assert.equal((await again).status, 200, 'its share free again, the merchant is admitted');
      release('B');
      assert.deepEqual(await Promise.all(busyB.map((r) => r.then((x) => x.status))), [200, 200]);
      await held(0);
      assert.equal(admission.heldBy('A') + admission.heldBy('B'), 0);

      const shed = await metrics.capturesShed.get();
      assert.deepEqual(
        shed.values.filter((v) => v.value > 0).map((v) => [v.labels.cause, v.value]), // every cause exists at 0 from the start
        [['merchant_share', 1]],
      );
    });
  });
});
