/**
 * npm run soak: the open-loop load (open-loop.ts, merchants polling as in the bench) at a steady
 * rate for a long time, on a stack of its own, watching for leaks and drift. Every
 * SOAK_SAMPLE_SECONDS it samples each process's resident memory and open descriptors, the Node
 * processes' heap, the store's and Temporal's files, and the settlement shards' history and runs
 * (continue-as-new); at the end it judges (soak-verdict.ts) and fails when throughput drifted down
 * more than 10 %, when memory or descriptors kept growing (runs of 10 minutes or more), or when an
 * accepted payment did not reach CONFIRMED.
 *
 * Settings (env): SOAK_MINUTES (default 30), SOAK_RATE (captures/s, default 12: half the peak
 * docs/benchmarks.md measured), SOAK_SAMPLE_SECONDS (15), SOAK_SEGMENT_SECONDS (vouchers are
 * prepared one segment ahead, 60), SOAK_OUT (JSON), SOAK_PLOT (PNG path), SOAK_KEEP_DATA=1.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { throwawayStackSource } from '../tools/stack/throwaway-source.js';
import { startStack, type StackHandle } from '../tools/stack/stack.js';
import { newMerchant, UNTHROTTLED } from '../tools/harness/merchants.js';
import { onboardBorrower } from '../tools/harness/onboarding.js';
import { closeWorld, connectWorld } from '../tools/harness/world.js';
import { describeMachine, machineInfo } from './machine.js';
import { planArrivals, runOpenLoop, type OpenLoopResult } from './open-loop.js';
import { scrapeCounter, total } from './prom.js';
import { sampleStack, type StackSample } from './soak-sampler.js';
import { soakSvg, writePng } from './soak-chart.js';
import { judgeSoak, type SoakSample } from './soak-verdict.js';
import { mapPool } from './stats.js';
import { prepareVouchers, releaseUnused, type PreparedVoucher } from './vouchers.js';

const envNum = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const MINUTES = envNum('SOAK_MINUTES', 30);
const RATE = envNum('SOAK_RATE', 12);
const SAMPLE_SECONDS = envNum('SOAK_SAMPLE_SECONDS', 15);
const SEGMENT_SECONDS = envNum('SOAK_SEGMENT_SECONDS', 60);
const FINAL_DRAIN_SECONDS = 120;

type Sample = SoakSample & Omit<StackSample, 'rssMb' | 'fds' | 'heapMb'> & { acceptedPerSec: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function soakStack(dir: string): Promise<StackHandle> {
  const source: NodeJS.ProcessEnv = {
    ...(await throwawayStackSource(dir)),
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DEFAULT_CREDIT_LIMIT: '1000000000000',
  };
  return startStack({ source, quiet: true, headless: true });
}

async function main(): Promise<number> {
  console.log(`soak: ${MINUTES} min at ${RATE} captures/s on ${describeMachine(machineInfo())}`);
  const dir = mkdtempSync(join(tmpdir(), 'cf-soak-'));
  const stack = await soakStack(dir);
  const stop = () => void stack.stop().finally(() => process.exit(130));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const w = await connectWorld(stack.env);
  try {
    const merchants = await mapPool(Array.from({ length: 10 }), 4, (_, i) => newMerchant(w, `Soak ${i + 1}`, { rateLimits: UNTHROTTLED }));
    const borrowers = await mapPool(Array.from({ length: 10 }), 4, () => onboardBorrower(w, { perPaymentLimit: '1000000', dailyLimit: '1000000000000' }));
    const source = { w, merchants, borrowers, amount: '1000', mcpShare: 0, budgetSeconds: 5 };
    const processes = [...stack.infra.processes, stack.worker, stack.api].map((p) => ({ name: p.name, pid: p.pid as number }));
    const workerMetrics = `http://127.0.0.1:${stack.config.WORKER_METRICS_PORT}/metrics`;
    const metrics = { api: `${new URL(stack.urls.baseUrl).origin}/metrics`, worker: workerMetrics };
    const settledSoFar = async () => {
      const s = await scrapeCounter([workerMetrics], 'x402_payments_settled_total', 'none');
      return s ? total(s) : Number.NaN;
    };

    const segments = Math.max(1, Math.ceil((MINUTES * 60) / SEGMENT_SECONDS));
    const plans = Array.from({ length: segments }, () => planArrivals(RATE, SEGMENT_SECONDS));
    let next = prepareVouchers(source, (plans[0] as number[]).length);
    await next;
    const t0 = Date.now();
    const samples: Sample[] = [];
    let loadDone = false;
    let acceptedCount = 0;

    const sampler = (async () => {
      let lastT = 0;
      let lastSettled = await settledSoFar();
      let lastAccepted = 0;
      while (!loadDone) {
        await sleep(SAMPLE_SECONDS * 1000);
        const t = (Date.now() - t0) / 1000;
        const [settled, stackSample] = await Promise.all([settledSoFar(), sampleStack({ processes, metrics, dataDir: stack.dataDir, temporal: w.temporal })]);
        const dt = t - lastT;
        const s: Sample = { t, settledPerSec: (settled - lastSettled) / dt, acceptedPerSec: (acceptedCount - lastAccepted) / dt, ...stackSample };
        samples.push(s);
        [lastT, lastSettled, lastAccepted] = [t, settled, acceptedCount];
        const rss = Object.entries(s.rssMb).map(([n, v]) => `${n} ${v.toFixed(0)}`).join(', ');
        console.log(`${(t / 60).toFixed(1)} min: settled ${s.settledPerSec.toFixed(1)}/s; RSS MB ${rss}; store ${s.storeMb.toFixed(0)} MB, temporal.db ${s.temporalDbMb.toFixed(0)} MB; shard runs ${s.shardRuns}`);
      }
    })();

    const runs: Promise<OpenLoopResult>[] = [];
    for (let k = 0; k < segments; k++) {
      const segmentStart = Date.now();
      const vouchers: PreparedVoucher[] = (await next).vouchers;
      if (k + 1 < segments) next = prepareVouchers(source, (plans[k + 1] as number[]).length);
      const run = runOpenLoop({
        baseUrl: stack.urls.baseUrl,
        rate: RATE,
        seconds: SEGMENT_SECONDS,
        vouchers,
        arrivals: plans[k] as number[],
        drainSeconds: k === segments - 1 ? FINAL_DRAIN_SECONDS : SEGMENT_SECONDS * 3,
      }).then(async (r) => {
        acceptedCount += r.records.filter((x) => x.outcome === 'accepted').length;
        const answeredRefusals = r.records.map((x, i) => [x, vouchers[i]] as const).filter(([x]) => x.outcome !== 'accepted' && x.outcome !== 'unanswered' && !x.code?.startsWith('network'));
        await releaseUnused(w, answeredRefusals.map(([, v]) => v as PreparedVoucher));
        return r;
      });
      runs.push(run);
      await sleep(Math.max(0, segmentStart + SEGMENT_SECONDS * 1000 - Date.now()));
    }
    const results = await Promise.all(runs);
    loadDone = true;
    await sampler;

    const records = results.flatMap((r) => r.records);
    const accepted = records.filter((r) => r.outcome === 'accepted');
    const notConfirmed = accepted.filter((r) => r.terminal !== 'CONFIRMED').length;
    // The verdict reads the load itself, not the drain after it.
    const verdict = judgeSoak(samples.filter((x) => x.t <= segments * SEGMENT_SECONDS));
    if (notConfirmed > 0) verdict.problems.push(`${notConfirmed} accepted payments not CONFIRMED ${FINAL_DRAIN_SECONDS} s after the load`);
    const shed = records.filter((r) => r.outcome === 'shed_unavailable' || r.outcome === 'shed_rate_limited').length;
    const summary = {
      minutes: MINUTES,
      rate: RATE,
      offered: records.length,
      accepted: accepted.length,
      shed,
      notConfirmed,
      baselineSettledPerSec: verdict.baselineSettledPerSec,
      lastSettledPerSec: verdict.lastSettledPerSec,
      throughputDrift: verdict.throughputDrift,
      growth: verdict.growth,
      final: samples.at(-1),
      ok: verdict.problems.length === 0,
      problems: verdict.problems,
    };
    console.log(`\nsoak ${summary.ok ? 'passed' : 'FAILED'}: ${accepted.length} of ${records.length} captures accepted, ${shed} shed, ${notConfirmed} not confirmed`);
    console.log(`throughput: ${verdict.baselineSettledPerSec.toFixed(2)} settled/s in the second quarter, ${verdict.lastSettledPerSec.toFixed(2)} in the last (${(verdict.throughputDrift * 100).toFixed(1)} %)`);
    for (const g of verdict.growth) console.log(`${g.ok ? '  ok ' : 'GROWS'} ${g.process} ${g.metric}: ${g.baseline.toFixed(1)} -> ${g.last.toFixed(1)} (${(g.growth * 100).toFixed(0)} %)`);
    for (const p of verdict.problems) console.log(`problem: ${p}`);
    if (process.env.SOAK_OUT) writeFileSync(process.env.SOAK_OUT, JSON.stringify({ summary, samples }, null, 2));
    if (process.env.SOAK_PLOT) {
      await writePng(soakSvg(samples, `Soak: ${RATE} captures/s offered for ${MINUTES} min`, RATE), process.env.SOAK_PLOT);
      console.log(`wrote ${process.env.SOAK_PLOT}`);
    }
    return summary.ok ? 0 : 1;
  } finally {
    await closeWorld(w);
    await stack.stop();
    if (process.env.SOAK_KEEP_DATA === '1') console.log(`soak stack data kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
