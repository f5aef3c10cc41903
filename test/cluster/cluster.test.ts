import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { paymentsReconcile } from '../../tools/cli/payment-commands.js';
import { startReplicas, type Replicas } from '../../tools/stack/cluster/replicas.js';
import { supervisedWithReplicas } from '../../tools/stack/cluster/supervised.js';
import { CLUSTER_HISTORY_SHARDS, TEMPORAL_DATABASES } from '../../tools/stack/cluster/temporal-config.js';
import { POSTGRES_UNUSED_VISIBILITY_INDEXES } from '../../tools/stack/cluster/visibility-indexes.js';
import { psqlAt } from '../helpers/psql.js';
import { ensureTemporalServer } from '../../tools/stack/cluster/temporal-server-build.js';
import { freePort } from '../../tools/stack/processes.js';
import { StackSupervisor } from '../../tools/stack/supervisor.js';
import { capturePayments, newParties } from '../helpers/captures.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { refund, refundUntil, signedRefund } from '../helpers/refunds.js';
import { settledEvents } from '../helpers/settlement-evidence.js';
import { pollUntil } from '../helpers/world.js';
import { acceptedAfterRetries, awaitSettlements, loadParties, planLoad, runLoad } from '../faults/load-captures.js';
import { useIsolatedStack } from '../support/isolated-stack.js';

/**
 * The product on the cluster topology (TEMPORAL_TOPOLOGY=cluster, tools/stack/cluster): PostgreSQL,
 * the Temporal server's frontend, history, matching and worker as four processes over 4 history
 * shards, FerretDB on PostgreSQL, two APIs and two workers with their own settler keys. Run with
 * CLUSTER=1 (the first run builds the Temporal server with Go: 10+ minutes on 2 cores).
 * CLUSTER_OUT=<file> writes the kill test's figures as JSON. The cluster's backup and restore:
 * backup-restore.test.ts beside this file.
 */
const enabled = process.env.CLUSTER === '1';
const SHARDS = 4;
const RATE = 6;
const WINDOW_SECONDS = 50;
const HISTORY_KILL_AT_MS = 12_000;
const MATCHING_KILL_AT_MS = 30_000;
const DOWN_MS = 3_000;
const REPLICA_RATE = 4;
const REPLICA_WINDOW_SECONDS = 40;
const API_2_KILL_AT_MS = 10_000;
const WORKER_2_KILL_AT_MS = 24_000;
/** Generous for 2 shared cores: the supervisor waits 0.5 s, then a Node process starts and answers. */
const REPLICA_BACK_WITHIN_MS = 30_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (!enabled) {
  describe('cluster topology', () => {
    it('runs only with CLUSTER=1: it starts PostgreSQL and a four-service Temporal cluster built from source (npm run test:cluster)', function () {
      this.skip();
    });
  });
} else {
  describe('cluster topology: PostgreSQL, four Temporal services over 4 shards, FerretDB on PostgreSQL, two APIs and two workers', function () {
    this.timeout(900_000);
    let replicas: Replicas | undefined;
    // Made by the replicas' kill test, wired as tools/stack/start.ts wires it; until then an exit goes unanswered.
    let supervisor: StackSupervisor | undefined;
    const superviseExit = (name: string, info: Parameters<StackSupervisor['partExited']>[1]) => supervisor?.partExited(name, info);
    const timings: Record<string, number> = {};

    before(async function () {
      this.timeout(60 * 60_000);
      const t0 = Date.now();
      await ensureTemporalServer((m) => process.stderr.write(`cluster | ${m}\n`));
      timings.serverBinariesMs = Date.now() - t0;
      timings.stackStartAt = Date.now();
    });

    // Registered before the stack's own after hook, so the replicas stop before the stack.
    after(async function () {
      this.timeout(60_000);
      supervisor?.stop();
      await replicas?.stop();
    });

    const env = useIsolatedStack({
      env: { TEMPORAL_TOPOLOGY: 'cluster', SETTLEMENT_SHARDS: String(SHARDS), CONFIRMATIONS: '1', BATCH_MAX_WAIT_MS: '500', CAPTURE_SWEEP_AFTER_SECONDS: '5', SPEND_INTENT_TTL_SECONDS: '1800' },
      onUnexpectedExit: superviseExit,
    });

    before(async function () {
      this.timeout(180_000);
      const { stack, chain } = env();
      timings.bringUpMs = Date.now() - timings.stackStartAt!;
      await chain.intervalMining(1);
      replicas = await startReplicas(stack, { apiPort: await freePort(), quiet: true, onUnexpectedExit: superviseExit });
      process.stdout.write(`\ncluster bring-up: ${JSON.stringify({ ...timings, stackStartAt: undefined })}\n`);
    });

    it('runs as separate processes: postgres, four Temporal services, FerretDB, anvil, two APIs and two workers', function () {
      const { stack } = env();
      assert.equal(stack.infra.topology, 'cluster');
      const names = stack.parts().map((p) => p.name);
      for (const n of ['postgres', 'temporal-frontend', 'temporal-history', 'temporal-matching', 'temporal-worker', 'ferretdb', 'anvil', 'worker', 'api']) assert.ok(names.includes(n), `${n} runs (${names.join(', ')})`);
      assert.ok(!names.includes('temporal'), 'no dev server');
      assert.ok(replicas!.api.running && replicas!.worker.running);
      assert.notEqual(replicas!.settlerAddress.toLowerCase(), stack.chain.settlerAddress.toLowerCase(), 'the second worker has a key of its own');
    });

    it('money path: onboarding, captures through both APIs -> CONFIRMED, reconciled from chain events, and a refund', async function () {
      const { stack, world: w } = env();
      const startedAt = new Date(Date.now() - 60_000);
      const p = await newParties(w, 'Cluster merchant'); // onboards the borrower: sign-in, register, facility, agent key, handle
      const viaFirst = await capturePayments(w, p, [5000n, 7000n]);
      const viaSecond = await capturePayments({ ...w, baseUrl: replicas!.apiBaseUrl }, p, [3000n]);
      const payments = [...viaFirst, ...viaSecond];
      await assertLedgerAgrees(w, payments, { timeoutMs: 180_000 });
      for (const pay of payments) assert.equal((await settledEvents(w, { paymentId: pay.paymentId })).length, 1);

      const target = viaFirst[0]!;
      const r = await refund(w, p.merchant, target.paymentId, await signedRefund(w, p.merchant, target.paymentId, '2000'));
      assert.equal(r.status, 202, JSON.stringify(r.json));
      const after = await refundUntil(w, p.merchant, target.paymentId, r.json.refund.refundId as string, 'SUCCEEDED', 180_000);
      assert.equal(after.amountRefunded, '2000');

      const out = await paymentsReconcile(w.cli, { merchant: p.merchant.merchantId, from: startedAt.toISOString() });
      assert.deepEqual(out.differences, [], 'store and chain agree');
      assert.equal(out.storeConfirmed, 3);
      assert.equal(out.chainSettled, 3);
      assert.equal(out.chainRefunds, 1);
      assert.equal((await pollUntil(w, p.merchant, target.paymentId, 'CONFIRMED')).status, 'CONFIRMED');
      assert.ok(stack.parts().every((part) => part.running), 'nothing died on the way');
    });

    it('PostgreSQL: the store finds a document by an index, not a scan of its table, and Temporal keeps only the visibility indexes it queries', async function () {
      const { stack } = env();
      const cluster = stack.infra.cluster!;
      const store = psqlAt(cluster.ferretdbPostgresUrl);
      const payments = (await store(`SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND c.relname LIKE 'payments\\_%' ESCAPE '\\'`)).trim();
      assert.match(payments, /^\w+\.payments_[0-9a-f]+$/, 'the payments collection has its table');
      // FerretDB filters as `_jsonb -> $1 @> $2`; with scans priced out, only a usable index changes the plan.
      const plan = await store(`SET enable_seqscan = off; EXPLAIN SELECT _jsonb FROM ${payments} WHERE _jsonb -> '_id' @> '"p-1"'`);
      assert.match(plan, /Index Scan on \w+__id__\w+_gin/, plan);
      assert.doesNotMatch(plan, /Seq Scan/, plan);
      const visibility = psqlAt(cluster.ferretdbPostgresUrl, TEMPORAL_DATABASES.visibility);
      const indexes = (await visibility(`SELECT indexname FROM pg_indexes WHERE tablename = 'executions_visibility'`)).trim().split('\n');
      for (const dropped of POSTGRES_UNUSED_VISIBILITY_INDEXES) assert.ok(!indexes.includes(dropped), `${dropped} dropped`);
      for (const kept of ['default_idx', 'by_workflow_type', 'by_status', 'by_keyword_01', 'by_keyword_05']) assert.ok(indexes.includes(kept), `${kept} kept`);
    });

    it('kills the history service, then the matching service, mid-load: every payment settled exactly once', async function () {
      const { stack, world: w } = env();
      const parties = await loadParties(w, 6, 'Cluster kill merchant');
      const apis = [w.baseUrl, replicas!.apiBaseUrl];
      const load = await planLoad(w, parties, apis, RATE, WINDOW_SECONDS);
      const loadStart = Date.now();
      const kills: { service: string; atSeconds: number; backInSeconds: number }[] = [];
      const killing = (async () => {
        for (const [service, at] of [['temporal-history', HISTORY_KILL_AT_MS], ['temporal-matching', MATCHING_KILL_AT_MS]] as const) {
          await sleep(Math.max(0, loadStart + at - Date.now()));
          const t = Date.now();
          await stack.infra.cluster!.restart(service, { kill: true, downMs: DOWN_MS });
          kills.push({ service, atSeconds: (t - loadStart) / 1000, backInSeconds: (Date.now() - t) / 1000 });
        }
      })();
      killing.catch(() => undefined);

      const { sent } = await runLoad(load, RATE, WINDOW_SECONDS, 150);
      await killing;
      const { accepted, firstAnswers, resolvedByRetry } = await acceptedAfterRetries(sent, apis[0]!, parties.merchants, stack.dataDir);
      const { settledTwice, lost } = await awaitSettlements(w, accepted, 240_000);
      const confirmSeconds = sent.flatMap((s) => (s.record.confirmSeconds === undefined ? [] : [s.record.confirmSeconds]));
      const figures = {
        rate: RATE, windowSeconds: WINDOW_SECONDS, apis: 2, workers: 2, settlementShards: SHARDS, historyShards: CLUSTER_HISTORY_SHARDS,
        offered: sent.length, firstAnswers, resolvedByRetry, accepted: accepted.length, lost, settledTwice, kills,
        captureToConfirmedSecondsMax: confirmSeconds.length > 0 ? Math.max(...confirmSeconds) : null, confirmedSeenByPolls: confirmSeconds.length,
      };
      process.stdout.write(`\ncluster kills: ${JSON.stringify(figures, null, 2)}\n`);
      if (process.env.CLUSTER_OUT) writeFileSync(process.env.CLUSTER_OUT, JSON.stringify(figures, null, 2));
      assert.equal(kills.length, 2, 'both services were killed and came back');
      assert.equal(settledTwice, 0, 'settled twice');
      assert.equal(lost, 0, 'lost');
      assert.ok(accepted.length > 0);
      await assertLedgerAgrees(w, accepted, { timeoutMs: 300_000 });
    });

    it('SIGKILLs api-2, then worker-2, under a light load: the supervisor has each back within seconds; none lost or paid twice', async function () {
      const { stack, world: w } = env();
      const said: string[] = [];
      const gaveUp: string[] = [];
      supervisor = new StackSupervisor(supervisedWithReplicas(stack, replicas), { log: (m) => said.push(`${Date.now()} ${m}`), giveUp: (r) => gaveUp.push(r) });
      const parties = await loadParties(w, 2, 'Cluster replica kill merchant');
      const apis = [w.baseUrl, replicas!.apiBaseUrl];
      const load = await planLoad(w, parties, apis, REPLICA_RATE, REPLICA_WINDOW_SECONDS);
      const loadStart = Date.now();
      const kills: { part: string; atSeconds: number; backInSeconds: number }[] = [];
      const backAfter = async (part: string, atMs: number) => {
        for (;;) {
          const line = said.find((l) => l.includes(`${part} is back`) && Number(l.split(' ')[0]) >= atMs);
          if (line) return Number(line.split(' ')[0]) - atMs;
          assert.equal(gaveUp.length, 0, gaveUp.join('; '));
          assert.ok(Date.now() - atMs < REPLICA_BACK_WITHIN_MS, `${part} back within ${REPLICA_BACK_WITHIN_MS / 1000} s; the supervisor said ${JSON.stringify(said)}`);
          await sleep(100);
        }
      };
      const killing = (async () => {
        for (const [part, at] of [['api-2', API_2_KILL_AT_MS], ['worker-2', WORKER_2_KILL_AT_MS]] as const) {
          await sleep(Math.max(0, loadStart + at - Date.now()));
          const victim = part === 'api-2' ? replicas!.api : replicas!.worker;
          assert.ok(victim.running, `${part} runs before it is killed`);
          const t = Date.now();
          process.kill(victim.pid, 'SIGKILL');
          const backMs = await backAfter(part, t);
          kills.push({ part, atSeconds: (t - loadStart) / 1000, backInSeconds: backMs / 1000 });
        }
      })();
      killing.catch(() => undefined);

      const { sent } = await runLoad(load, REPLICA_RATE, REPLICA_WINDOW_SECONDS, 150);
      await killing;
      // Back means answering: api-2's health, worker-2's 'worker ready', each from a new process.
      const health = await fetch(`${replicas!.apiBaseUrl}/facilitator/health`);
      assert.equal(health.status, 200, 'api-2 answers its health check');
      // Its log file, not the process's recent lines: a busy worker's batch lines push 'worker ready' out of those.
      const worker2Log = replicas!.worker.logFile;
      const readyLines = worker2Log ? readFileSync(worker2Log, 'utf8').split('\n').filter((l) => l.includes('worker ready')).length : replicas!.worker.tail().filter((l) => l.includes('worker ready')).length + 1;
      assert.ok(replicas!.worker.running && readyLines >= 2, `worker-2 is ready again (${readyLines} 'worker ready' lines: its first start and its restart)`);
      for (const part of ['api-2', 'worker-2']) assert.ok(said.some((l) => l.includes(`${part} exited unexpectedly (signal SIGKILL); restarting it in`)), `the supervisor said why it restarted ${part}`);
      assert.equal(gaveUp.length, 0);

      const { accepted, firstAnswers, resolvedByRetry } = await acceptedAfterRetries(sent, apis[0]!, parties.merchants, stack.dataDir);
      const { settledTwice, lost } = await awaitSettlements(w, accepted, 240_000);
      process.stdout.write(`\ncluster replica kills: ${JSON.stringify({ rate: REPLICA_RATE, windowSeconds: REPLICA_WINDOW_SECONDS, offered: sent.length, firstAnswers, resolvedByRetry, accepted: accepted.length, lost, settledTwice, kills }, null, 2)}\n`);
      assert.equal(kills.length, 2, 'both replicas were killed and came back');
      assert.equal(settledTwice, 0, 'settled twice');
      assert.equal(lost, 0, 'lost');
      assert.ok(accepted.length > 0);
      await assertLedgerAgrees(w, accepted, { timeoutMs: 300_000 });
    });
  });
}
