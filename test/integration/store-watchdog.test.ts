import assert from 'node:assert/strict';
import { connectStore, type Store } from '../../src/store/mongo.js';
import { startStoreWatchdog } from '../../src/store/store-watchdog.js';
import type { Logger } from '../../src/observability/logger.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { world, type World } from '../helpers/world.js';

function recordingLogger(lines: string[]): Logger {
  const log = (msg: string) => lines.push(msg);
  return { debug: log, info: log, warn: log, error: log, child: () => recordingLogger(lines) } as unknown as Logger;
}

/**
 * A process's store client that stays broken while the store is reachable (seen after a store
 * restart under load) is replaced by the watchdog, and code holding `store.c` from before keeps
 * working. The process's client reaches the store through a proxy the test cuts; the watchdog's
 * fresh client goes straight to the store.
 */
describe('store watchdog: a wedged client is replaced', function () {
  this.timeout(60_000);
  let w: World;
  let proxy: TcpProxy;
  let store: Store;

  before(async function () {
    w = await world();
    const direct = new URL(w.env.MONGODB_URI as string);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port) });
    store = await connectStore(`mongodb://127.0.0.1:${new URL(proxy.url).port}/`, w.store.db.databaseName);
  });

  after(async function () {
    await store.close().catch(() => undefined);
    await proxy.close();
  });

  it('swaps in a fresh client once pings have failed for the set time, and earlier holders of store.c follow it', async function () {
    const lines: string[] = [];
    const c = store.c;
    await c.merchants.findOne({});
    const first = store.client;
    const dog = startStoreWatchdog(store, { uri: w.env.MONGODB_URI as string, logger: recordingLogger(lines), intervalMs: 200, wedgedAfterMs: 1_500 });
    try {
      proxy.setMode('refuse');
      await assert.rejects(c.merchants.findOne({}), /ECONNREFUSED|closed|Server selection|ECONNRESET/i);
      const deadline = Date.now() + 20_000;
      while (store.client === first && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      assert.notEqual(store.client, first, 'the client was replaced');
      assert.ok(lines.some((l) => l.startsWith('store client replaced')));
      const _id = `watchdog-${Date.now()}`;
      await w.store.c.locks.insertOne({ _id, holder: 'store-watchdog-test', until: new Date() } as never);
      const seen = await c.locks.findOne({ _id });
      assert.equal(seen?._id, _id, 'the collection captured before the swap reads through the new client');
      await c.locks.deleteOne({ _id });
    } finally {
      dog.stop();
    }
  });

  it('leaves the client alone while the store is down for everyone', async function () {
    const lines: string[] = [];
    proxy.setMode('pass');
    const viaProxy = await connectStore(`mongodb://127.0.0.1:${new URL(proxy.url).port}/`, w.store.db.databaseName);
    const first = viaProxy.client;
    const unreachable = `mongodb://127.0.0.1:${new URL(proxy.url).port}/`;
    const dog = startStoreWatchdog(viaProxy, { uri: unreachable, logger: recordingLogger(lines), intervalMs: 200, wedgedAfterMs: 500 });
    try {
      proxy.setMode('refuse');
      await new Promise((r) => setTimeout(r, 8_000));
      assert.equal(viaProxy.client, first);
      assert.deepEqual(lines, []);
    } finally {
      dog.stop();
      proxy.setMode('pass');
      await viaProxy.close().catch(() => undefined);
    }
  });
});
