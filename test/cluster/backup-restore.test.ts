import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planArrivals, runOpenLoop } from '../../bench/open-loop.js';
import { prepareVouchers as prepareLoadVouchers } from '../../bench/vouchers.js';
import { backupStack, restoreStack } from '../../tools/stack/backup.js';
import { ensureTemporalServer } from '../../tools/stack/cluster/temporal-server-build.js';
import type { StackHandle } from '../../tools/stack/stack.js';
import { assertLedgerAgrees, settledEventsFor } from '../helpers/ledger.js';
import { capturePayments, newParties, waitForPayments } from '../helpers/captures.js';
import { closeWorld, connectWorld, type World } from '../helpers/world.js';
import { capturesKeptByTheCopy } from '../faults/restored-captures.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { launchTestStack, testSource } from '../support/stack.js';

/**
 * `stack backup` on the cluster topology (tools/stack/cluster/postgres-backup.ts): PostgreSQL,
 * Temporal's databases and the store's together, copied by pg_basebackup while captures flow, then
 * the chain; restored into a fresh data directory and started there on the cluster topology.
 * Run with CLUSTER=1 (npm run test:cluster), as cluster.test.ts.
 */
const enabled = process.env.CLUSTER === '1';
const SETTINGS = { TEMPORAL_TOPOLOGY: 'cluster', BATCH_MAX_WAIT_MS: '300', CAPTURE_SWEEP_AFTER_SECONDS: '5' };

if (enabled) {
  describe('cluster topology: backup under load, restored into a fresh data directory', function () {
    this.timeout(900_000);
    before(async function () {
      this.timeout(60 * 60_000);
      await ensureTemporalServer((m) => process.stderr.write(`cluster | ${m}\n`));
    });
    const env = useIsolatedStack({ env: SETTINGS, rpcProxy: true });
    const dirs: string[] = [];
    let restored: StackHandle | undefined;
    let w2: World | undefined;

    after(async function () {
      this.timeout(120_000);
      if (w2) await closeWorld(w2);
      await restored?.stop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it('the restored cluster keeps what had settled and settles, exactly once, everything that was queued', async function () {
      const { stack, world: w, rpcProxy } = env();
      const parties = await newParties(w, 'Cluster backup merchant');
      const settled = await capturePayments(w, parties, [6001n, 6002n]);
      await waitForPayments(w, settled, 'CONFIRMED', (d) => d.status === 'CONFIRMED', 180_000);

      // The node unreachable from the worker: what is captured from here on waits in the queues.
      rpcProxy!.setMode('blackhole');
      const queued = await capturePayments(w, parties, [6003n, 6004n, 6005n]);
      const arrivals = planArrivals(4, 8);
      const source = { w, merchants: [parties.merchant], borrowers: [parties.borrower], amount: '1000', mcpShare: 0, budgetSeconds: 5 };
      const vouchers = (await prepareLoadVouchers(source, arrivals.length)).vouchers;
      const backupDir = mkdtempSync(join(tmpdir(), 'cf-cluster-backup-'));
      dirs.push(backupDir);
      rmSync(backupDir, { recursive: true });
      const backupStarted = Date.now();
      const [load, manifest] = await Promise.all([
        runOpenLoop({ baseUrl: w.baseUrl, rate: 4, seconds: 8, vouchers, arrivals, drainSeconds: 5 }),
        new Promise((r) => setTimeout(r, 3_000)).then(() => backupStack({ dataDir: stack.dataDir, to: backupDir, rpcUrl: stack.urls.rpcUrl })),
      ]);
      process.stdout.write(`\ncluster backup: ${JSON.stringify({ ...manifest, wallSeconds: (Date.now() - backupStarted) / 1000 - 3 })}\n`);
      assert.equal(manifest.cluster?.postgres, 'pg_basebackup', JSON.stringify(manifest));
      for (const f of ['postgres-password', 'schema-created']) assert.ok(manifest.cluster.files.includes(f), `cluster/${f} is in the backup`);
      assert.equal(manifest.chainState, 'anvil_dumpState');
      const duringBackup = load.records.filter((r) => r.outcome === 'accepted');
      assert.ok(duringBackup.length > 0, 'captures were accepted while the backup ran');
      await stack.stop();

      const dataDir = mkdtempSync(join(tmpdir(), 'cf-cluster-restored-'));
      dirs.push(dataDir);
      restoreStack({ from: backupDir, to: dataDir });
      restored = await launchTestStack(dataDir, await testSource(dataDir, SETTINGS));
      assert.equal(restored.infra.topology, 'cluster');
      w2 = await connectWorld({ ...restored.env, RPC_URL: restored.urls.rpcUrl });
      assert.equal(restored.chain.settlement, stack.chain.settlement, 'the same contracts, from the restored chain');

      const underLoad = await capturesKeptByTheCopy(w2, vouchers, [parties.merchant], duringBackup.length);
      await assertLedgerAgrees(w2, [...settled, ...queued, ...underLoad], { timeoutMs: 300_000 });
      assert.equal((await settledEventsFor(w2, settled.map((p) => p.paymentId))).length, settled.length, 'what had settled before the backup was not paid again');
    });
  });
}
