import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { phaseTimerOf, recordAcceptTimes, serverTiming } from '../../src/observability/phase-timer.js';

const phases = (header: string | null) => Object.fromEntries((header ?? '').split(', ').map((p) => [p.split(';')[0], Number(p.split('dur=')[1])]));

describe('Server-Timing phases', () => {
  let server: Server;
  let url: string;

  before(async () => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch {
        ctx.status = 503; // as the error middleware answers a shed capture
      }
    });
    app.use(serverTiming(true));
    app.use(async (ctx) => {
      phaseTimerOf(ctx)?.mark('auth');
      if (ctx.path === '/shed') throw new Error('shed');
      ctx.body = 'ok';
    });
    server = createServer(app.callback());
    recordAcceptTimes(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('tells a client that sent X-Sent-At how long it waited before the handler, on answers and refusals alike', async () => {
    const sentAt = performance.timeOrigin + performance.now() - 50; // as if it had left 50 ms ago
    for (const path of ['/ok', '/shed']) {
      const res = await fetch(`${url}${path}`, { headers: { 'x-sent-at': String(sentAt), connection: 'close' } });
      const p = phases(res.headers.get('server-timing'));
      assert.deepEqual(Object.keys(p), ['queue_accept', 'queue_read', 'auth', 'respond'], path);
      assert.ok((p.queue_accept as number) + (p.queue_read as number) >= 49, `${path}: ${res.headers.get('server-timing')}`);
      assert.ok((p.queue_accept as number) >= 0 && (p.queue_read as number) >= 0);
    }
  });

  it('adds no queue phases for a client that did not say when it sent', async () => {
    const res = await fetch(`${url}/ok`);
    assert.deepEqual(Object.keys(phases(res.headers.get('server-timing'))), ['auth', 'respond']);
  });
});
