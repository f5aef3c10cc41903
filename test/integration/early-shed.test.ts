import assert from 'node:assert/strict';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { Registry } from 'prom-client';
import { CaptureAdmission } from '../../src/api/capture-admission.js';
import { CAPTURE_ROUTE, shedCapturesEarly } from '../../src/api/early-shed.js';
import { errorMiddleware } from '../../src/http/errors.js';
import { observeRequests } from '../../src/http/observe-requests.js';
import { requestIdMiddleware } from '../../src/http/request-id.js';
import type { Logger } from '../../src/observability/logger.js';
import { apiMetrics } from '../../src/observability/metrics.js';
import { world, type World } from '../helpers/world.js';

interface Line {
  msg: string;
  fields?: Record<string, unknown>;
}

function recordingLogger(lines: Line[]): Logger {
  const log = (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, ...(fields ? { fields } : {}) });
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: () => logger };
  return logger;
}

/** The capture route's chain as the API mounts it (request id, access log and metrics, error body, admission). */
function captureApp(admission: CaptureAdmission, logger: Logger, metrics: ReturnType<typeof apiMetrics>): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(requestIdMiddleware);
  app.use(observeRequests(logger, metrics));
  app.use(errorMiddleware(logger));
  const router = new Router();
  router.post(CAPTURE_ROUTE, admission.middleware(), (ctx) => {
    ctx.body = { handled: true };
  });
  router.post('/api/v1/facilitator/verify', (ctx) => {
    ctx.body = { handled: true };
  });
  app.use(router.routes());
  return app;
}

async function serve(listener: RequestListener): Promise<{ url: string; server: Server }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** An admission whose one slot is taken (a capture waits for it up to maxQueueMs, by default none does), with the taken slot's release. */
function fullAdmission(w: World, metrics: ReturnType<typeof apiMetrics>, maxQueueMs = 0): { admission: CaptureAdmission; release: () => Promise<void> } {
  const admission = new CaptureAdmission(w.store.c, { maxInFlight: 1, maxQueueMs, targetLatencyMs: 60_000, maxBacklog: 1_000_000, shards: 1 }, metrics);
  let free!: () => void;
  const held = admission.middleware()({} as Context, () => new Promise<void>((r) => (free = r)));
  return {
    admission,
    release: async () => {
      free();
      await held;
    },
  };
}

const post = (url: string, path: string) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x402Version":2}' });

/** Headers that differ between any two answers (time, connection handling, the request id's value). */
const VARYING = new Set(['date', 'connection', 'keep-alive', 'x-request-id']);
const stableHeaders = (r: Response) => Object.fromEntries([...r.headers].filter(([k]) => !VARYING.has(k)).sort(([a], [b]) => a.localeCompare(b)));

describe('captures refused before Koa', function () {
  let w: World;
  const servers: Server[] = [];
  before(async function () {
    w = await world();
  });
  after(function () {
    for (const s of servers) s.close();
  });

  /** The capture app behind shedCapturesEarly, counting the requests that reach the app. */
  async function countingServer(admission: CaptureAdmission): Promise<{ url: string; reached: () => number }> {
    const logger = recordingLogger([]);
    const metrics = apiMetrics(new Registry());
    const app = captureApp(admission, logger, metrics).callback();
    let reached = 0;
    const early = shedCapturesEarly(
      (req, res) => {
        reached++;
        return app(req, res);
      },
      admission,
      { logger, metrics, serverTiming: false },
    );
    const { url, server } = await serve(early);
    servers.push(server);
    return { url, reached: () => reached };
  }

  it('answer exactly as a refusal inside the route does: status, headers, error body, access log line and metrics', async function () {
    const lines: Line[] = [];
    const logger = recordingLogger(lines);
    const inside = fullAdmission(w, apiMetrics(new Registry()));
    const insideServer = await serve(captureApp(inside.admission, logger, apiMetrics(new Registry())).callback());
    const earlyMetrics = apiMetrics(new Registry());
    const early = fullAdmission(w, earlyMetrics);
    const earlyServer = await serve(shedCapturesEarly(captureApp(early.admission, logger, earlyMetrics).callback(), early.admission, { logger, metrics: earlyMetrics, serverTiming: false }));
    servers.push(insideServer.server, earlyServer.server);

    const a = await post(insideServer.url, CAPTURE_ROUTE);
    const insideLine = lines.pop();
    const b = await post(earlyServer.url, CAPTURE_ROUTE);
    const earlyLine = lines.pop();

    assert.equal(a.status, 503);
    assert.equal(b.status, 503);
    assert.deepEqual(stableHeaders(b), stableHeaders(a));
    assert.equal(b.headers.get('retry-after'), '1');
    const [aBody, bBody] = (await Promise.all([a.json(), b.json()])) as { error: { requestId: string } }[];
    assert.match(bBody!.error.requestId, /^req_[0-9a-f-]{36}$/);
    assert.equal(b.headers.get('x-request-id'), bBody!.error.requestId);
    assert.deepEqual({ ...bBody!.error, requestId: '' }, { ...aBody!.error, requestId: '' });

    assert.equal(insideLine?.msg, 'http');
    assert.deepEqual({ ...earlyLine?.fields, requestId: '', ms: 0 }, { ...insideLine?.fields, requestId: '', ms: 0 });
    const requests = await earlyMetrics.httpRequests.get();
    assert.deepEqual(
      requests.values.map((v) => v.labels),
      [{ route: CAPTURE_ROUTE, method: 'POST', status: '503' }],
    );
    const shed = await earlyMetrics.capturesShed.get();
    assert.deepEqual(
      shed.values.filter((v) => v.value > 0).map((v) => [v.labels.cause, v.value]), // every cause exists at 0 from the start
      [['in_flight', 1]],
    );
    await Promise.all([inside.release(), early.release()]);
  });

  it('carry Server-Timing (queue phases and respond) when it is on, as the route does', async function () {
    const metrics = apiMetrics(new Registry());
    const { admission, release } = fullAdmission(w, metrics);
    const logger = recordingLogger([]);
    const { url, server } = await serve(shedCapturesEarly(captureApp(admission, logger, metrics).callback(), admission, { logger, metrics, serverTiming: true }));
    servers.push(server);
    const refused = await fetch(`${url}${CAPTURE_ROUTE}`, { method: 'POST', headers: { 'x-sent-at': String(Date.now()) }, body: '{}' });
    assert.equal(refused.status, 503);
    assert.match(refused.headers.get('server-timing') ?? '', /^queue_accept;dur=[0-9.]+, queue_read;dur=[0-9.]+, respond;dur=[0-9.]+$/);
    await release();
  });

  it('pass everything else to the app: other routes, other methods, and a capture admission would take', async function () {
    const { admission, release } = fullAdmission(w, apiMetrics(new Registry()));
    const { url, reached } = await countingServer(admission);

    assert.equal((await post(url, '/api/v1/facilitator/verify')).status, 200);
    assert.notEqual((await fetch(`${url}${CAPTURE_ROUTE}`)).status, 503, 'a GET is not a capture');
    assert.equal((await post(url, CAPTURE_ROUTE)).status, 503);
    const reachedWhileFull = reached();
    await release();
    const admitted = await post(url, `${CAPTURE_ROUTE}?trace=1`);
    assert.equal(admitted.status, 200);
    assert.deepEqual(await admitted.json(), { handled: true });
    assert.equal(reached(), reachedWhileFull + 1, 'the admitted capture reached the app');
    assert.equal(reachedWhileFull, 2, 'the refused capture did not reach the app; the GET and the other route did');
    assert.equal((await post(url, CAPTURE_ROUTE)).status, 200, 'the one slot, taken by the route (never in front of the app), is free once the answer is sent');
    let free!: () => void;
    const held = admission.middleware()({} as Context, () => new Promise<void>((r) => (free = r)));
    assert.equal((await post(url, CAPTURE_ROUTE)).status, 503, 'and released once: with the slot taken again, the next capture is refused');
    free();
    await held;
  });

  it('take no slot and hold nothing: with the queue open a capture waits for its slot in the route; once the process is shedding, one that finds no slot is refused in front of the app', async function () {
    const { admission, release } = fullAdmission(w, apiMetrics(new Registry()), 300);
    const { url, reached } = await countingServer(admission);

    const waiting = post(url, CAPTURE_ROUTE);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(reached(), 1, 'a burst is not refused up front: the capture went on to the app');
    assert.equal(admission.inFlightCount, 1, 'and only the slot taken before it is held');
    await release();
    assert.equal((await waiting).status, 200, 'it was admitted in the route once the slot freed');

    let free!: () => void;
    const held = admission.middleware()({} as Context, () => new Promise<void>((r) => (free = r)));
    assert.equal((await post(url, CAPTURE_ROUTE)).status, 503, 'no slot freed within the queue time: shed in the route');
    assert.equal(reached(), 2);
    assert.equal((await post(url, CAPTURE_ROUTE)).status, 503, 'the process is shedding and the slot is taken');
    assert.equal(reached(), 2, 'refused in front of the app, at once');
    free();
    await held;
    assert.equal((await post(url, CAPTURE_ROUTE)).status, 200, 'a free slot lets a capture on again, shedding or not');
    assert.equal(reached(), 3);
  });
});
