import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planArrivals, runOpenLoop } from '../../bench/open-loop.js';
import { prepareVouchers as prepareLoadVouchers } from '../../bench/vouchers.js';
import { backupStack, restoreStack } from '../../tools/stack/backup.js';
import type { StackHandle } from '../../tools/stack/stack.js';
import { assertLedgerAgrees, settledEventsFor } from '../helpers/ledger.js';
import { capturePayments, newParties, waitForPayments } from '../helpers/captures.js';
import { closeWorld, connectWorld, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { launchTestStack, testSource } from '../support/stack.js';
import { capturesKeptByTheCopy } from './restored-captures.js';

describe('backup under load, restored into a fresh data directory', function () {
  this.timeout(600_000);
  const env = useIsolatedStack({ env: { BATCH_MAX_WAIT_MS: '300', CAPTURE_SWEEP_AFTER_SECONDS: '5' }, rpcProxy: true });
  const dirs: string[] = [];
  let restored: StackHandle | undefined;
  let w2: World | undefined;

  after(async function () {
    this.timeout(120_000);
    if (w2) await closeWorld(w2);
    await restored?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the restored stack keeps what had settled and settles, exactly once, everything that was queued', async function () {
    const { stack, world: w, rpcProxy } = env();
    const parties = await newParties(w, 'Backup merchant');
    const settled = await capturePayments(w, parties, [6001n, 6002n]);
    await waitForPayments(w, settled, 'CONFIRMED', (d) => d.status === 'CONFIRMED');

    // The node unreachable from the worker: what is captured from here on waits in the queues.
    rpcProxy!.setMode('blackhole');
    const queued = await capturePayments(w, parties, [6003n, 6004n, 6005n]);
    const arrivals = planArrivals(5, 8);
    const source = { w, merchants: [parties.merchant], borrowers: [parties.borrower], amount: '1000', mcpShare: 0, budgetSeconds: 5 };
    const vouchers = (await prepareLoadVouchers(source, arrivals.length)).vouchers;
    const backupDir = mkdtempSync(join(tmpdir(), 'cf-backup-'));
    dirs.push(backupDir);
    rmSync(backupDir, { recursive: true });
    const [load, manifest] = await Promise.all([
      runOpenLoop({ baseUrl: w.baseUrl, rate: 5, seconds: 8, vouchers, arrivals, drainSeconds: 5 }),
      new Promise((r) => setTimeout(r, 3_000)).then(() => backupStack({ dataDir: stack.dataDir, to: backupDir, rpcUrl: stack.urls.rpcUrl })),
    ]);
    assert.equal(manifest.chainState, 'anvil_dumpState');
    assert.ok(manifest.sqlite.includes('temporal.db') && manifest.sqlite.some((f) => f.startsWith('ferretdb/')), JSON.stringify(manifest));
    const duringBackup = load.records.filter((r) => r.outcome === 'accepted');
    assert.ok(duringBackup.length > 0, 'captures were accepted while the backup ran');
    await stack.stop();

    const dataDir = mkdtempSync(join(tmpdir(), 'cf-restored-'));
    dirs.push(dataDir);
    restoreStack({ from: backupDir, to: dataDir });
    restored = await launchTestStack(dataDir, await testSource(dataDir, { BATCH_MAX_WAIT_MS: '300', CAPTURE_SWEEP_AFTER_SECONDS: '5' }));
    w2 = await connectWorld({ ...restored.env, RPC_URL: restored.urls.rpcUrl });
    assert.equal(restored.chain.settlement, stack.chain.settlement, 'the same contracts, from the restored chain');

    const underLoad = await capturesKeptByTheCopy(w2, vouchers, [parties.merchant], duringBackup.length);
    await assertLedgerAgrees(w2, [...settled, ...queued, ...underLoad], { timeoutMs: 180_000 });
    assert.equal((await settledEventsFor(w2, settled.map((p) => p.paymentId))).length, settled.length, 'what had settled before the backup was not paid again');
  });
});
