import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planArrivals, runOpenLoop } from '../../bench/open-loop.js';
import { prepareVouchers as prepareLoadVouchers } from '../../bench/vouchers.js';
import { backupStack, restoreStack } from '../../tools/stack/backup.js';
import type { StackHandle } from '../../tools/stack/stack.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { capturePayments, newParties, waitForPayments } from '../helpers/captures.js';
import { closeWorld, connectWorld, paymentSettledEvent, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { launchTestStack, testSource } from '../support/stack.js';
import { capturesKeptByTheCopy } from './restored-captures.js';

const RATE = 10;
const SECONDS = 12;

/**
 * Issue 42: a backup taken while batches settle (the RPC live), restored. The copies are moments
 * apart: the chain first, then Temporal, then the store, so the chain copy never holds a payment the
 * store copy does not know; what the store recorded CONFIRMED after the chain's copy is sent again,
 * and what the chain settled that the store never recorded is ended by the worker's chain resync.
 * Every payment the restored store holds settles exactly once, and the restored chain pays nothing
 * else.
 */
describe('backup under load with the RPC live (batches settling during the copy), restored', function () {
  this.timeout(600_000);
  const settings = { BATCH_MAX_WAIT_MS: '200', CAPTURE_SWEEP_AFTER_SECONDS: '5', CONFIRMATIONS: '1' };
  const env = useIsolatedStack({ env: settings });
  const dirs: string[] = [];
  let restored: StackHandle | undefined;
  let w2: World | undefined;

  after(async function () {
    this.timeout(120_000);
    if (w2) await closeWorld(w2);
    await restored?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the restored stack settles every payment its store holds exactly once, and its chain pays no payment the store does not know', async function () {
    const { stack, world: w, chain } = env();
    await chain.intervalMining(1);
    const parties = await newParties(w, 'Live backup merchant');
    const before = await capturePayments(w, parties, [7001n, 7002n]);
    await waitForPayments(w, before, 'CONFIRMED', (d) => d.status === 'CONFIRMED');

    const arrivals = planArrivals(RATE, SECONDS);
    const source = { w, merchants: [parties.merchant], borrowers: [parties.borrower], amount: '1000', mcpShare: 0, budgetSeconds: 5 };
    const vouchers = (await prepareLoadVouchers(source, arrivals.length)).vouchers;
    const backupDir = mkdtempSync(join(tmpdir(), 'cf-backup-live-'));
    dirs.push(backupDir);
    rmSync(backupDir, { recursive: true });
    const [load] = await Promise.all([
      runOpenLoop({ baseUrl: w.baseUrl, rate: RATE, seconds: SECONDS, vouchers, arrivals, drainSeconds: 5 }),
      new Promise((r) => setTimeout(r, 5_000)).then(() => backupStack({ dataDir: stack.dataDir, to: backupDir, rpcUrl: stack.urls.rpcUrl })),
    ]);
    const accepted = load.records.filter((r) => r.outcome === 'accepted');
    assert.ok(accepted.length > RATE * 5, `captures were accepted under load (${accepted.length})`);
    await stack.stop();

    const dataDir = mkdtempSync(join(tmpdir(), 'cf-restored-live-'));
    dirs.push(dataDir);
    restoreStack({ from: backupDir, to: dataDir });
    restored = await launchTestStack(dataDir, await testSource(dataDir, settings));
    w2 = await connectWorld({ ...restored.env, RPC_URL: restored.urls.rpcUrl });

    const kept = await capturesKeptByTheCopy(w2, vouchers, [parties.merchant], accepted.length);
    const known = [...before, ...kept];
    await assertLedgerAgrees(w2, known, { timeoutMs: 180_000 });

    // Nothing else for this merchant on the restored chain: no payment paid that the store does not hold.
    const knownIds = new Set(known.map((p) => uuidToBytes32(p.paymentId).toLowerCase()));
    const merchantTopic = uuidToBytes32(parties.merchant.merchantId);
    const logs = await w2.publicClient.getLogs({ address: w2.settlement, event: paymentSettledEvent, args: { merchantId: merchantTopic }, fromBlock: BigInt(w2.env.DEPLOY_BLOCK ?? '0'), toBlock: 'latest' });
    const strangers = logs.filter((l) => !knownIds.has(String(l.args.paymentId).toLowerCase()));
    assert.deepEqual(strangers.map((l) => l.args.paymentId), [], 'the restored chain paid only payments the restored store holds');
  });
});
