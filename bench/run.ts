/**
 * `npm run bench`: open-loop levels of offered captures/s on a real stack of its own (free ports,
 * temp dir), the ceilings of the parts alone, gas against the x402 `exact` baseline, and a data
 * growth re-run; printed beside their bars and baselines, written to docs/benchmarks.md (+ SVG chart)
 * and, with BENCH_OUT, to JSON. Asserts nothing: a missed bar is reported, not failed.
 *
 * Settings (env): BENCH_QUICK=1 (short run), BENCH_RATES (captures/s, comma-separated), BENCH_SECONDS
 * (per level), BENCH_DRAIN_SECONDS, BENCH_PRELOAD (stored payments for data growth; 0 skips),
 * BENCH_MERCHANTS, BENCH_BORROWERS, BENCH_MAX_IN_FLIGHT, BENCH_ARRIVALS (poisson|even),
 * BENCH_MCP_VOUCHERS (per level, through prepare_x402_payment), BENCH_PREP_BUDGET_SECONDS (how long
 * one-by-one createSpendIntent may take per level before bulk holds take over), BENCH_OUT (JSON path),
 * BENCH_KEEP_DATA=1 (keep the stack's temp dir), BENCH_BLOCK_TIME (seconds between anvil's blocks; 0, the
 * default, mines one per transaction; >0 writes docs/benchmarks-block-time.md), BENCH_NORMAL_SECONDS (window of each normal-load level:
 * 0.5x and 0.8x the peak's settled/s, run after the sweep), BENCH_LONG_POLL (seconds of `Prefer: wait` every
 * other merchant of the normal-load levels long-polls with, 30 by default; 0: all poll once a second), TEMPORAL_TOPOLOGY=cluster (the stack on the
 * cluster topology, tools/stack/cluster; written to docs/benchmarks-cluster.md instead).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../src/config/paths.js';
import { benchStack } from './bench-stack.js';
import { agentDeps } from '../tools/harness/agent-deps.js';
import { newMerchant, UNTHROTTLED, type ProvisionedMerchant } from '../tools/harness/merchants.js';
import { onboardBorrower } from '../tools/harness/onboarding.js';
import { connectWorld } from '../tools/harness/world.js';
import { measureCeilings, remeasureTemporalCeilings, waitForQuietPipeline, QUICK_CEILINGS, FULL_CEILINGS } from './ceilings.js';
import { measureSettleBatchGas } from './gas.js';
import { preloadPayments, waitForStoreBacklog, type PreloadResult } from './growth.js';
import { describeLevel, runLevel, type LevelFigures, type LevelSettings } from './level.js';
import { machineInfo, describeMachine } from './machine.js';
import { floorBars, peakToCeiling } from './normal-load.js';
import { runNormalLevels } from './normal-levels.js';
import { benchmarksPage, type RunSettings } from './markdown.js';
import type { ArrivalKind } from './open-loop.js';
import { buildBlocks, blockText } from './sections.js';
import { mapPool } from './stats.js';
import { bars, peakLevel, saturationLevel, SATURATED_SHED_SHARE, summarizeBench, steadySettledRate, type GrowthRun } from './summary.js';
import { throughputChart } from './svg-chart.js';

const QUICK = process.env.BENCH_QUICK === '1';
const envNum = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);
const RATES = (process.env.BENCH_RATES ?? '25,50,100,200,400').split(',').map(Number).filter((r) => r > 0);
const SECONDS = envNum('BENCH_SECONDS', QUICK ? 15 : 60);
const DRAIN = envNum('BENCH_DRAIN_SECONDS', QUICK ? 8 : 30);
const PRELOAD = envNum('BENCH_PRELOAD', QUICK ? 100_000 : 500_000);
const MERCHANTS = envNum('BENCH_MERCHANTS', 50);
const BORROWERS = envNum('BENCH_BORROWERS', 50);
const MAX_IN_FLIGHT = envNum('BENCH_MAX_IN_FLIGHT', 2000);
const ARRIVALS = (process.env.BENCH_ARRIVALS ?? 'poisson') as ArrivalKind;
const MCP_VOUCHERS = envNum('BENCH_MCP_VOUCHERS', 10);
/** Quick mode keeps each normal-load level near 20 s: a 10 s window, a short voucher budget, the usual drain. */
const NORMAL_SECONDS = envNum('BENCH_NORMAL_SECONDS', QUICK ? 10 : SECONDS);
const POLL_EVERY_MS = 1000;
/**
 * In the normal-load levels every other merchant long-polls as the SDK's waitForSettlement does (their
 * CONFIRMED is the level's), the others poll once a second (the poll latencies); 0: all once a second.
 */
const NORMAL_LONG_POLL_SECONDS = envNum('BENCH_LONG_POLL', 30);
const AMOUNT = '1000';
const ON_CLUSTER = process.env.TEMPORAL_TOPOLOGY === 'cluster';
/** BENCH_BLOCK_TIME=2: anvil mines every 2 s (Base's rhythm), so CONFIRMED is the batch plus the next block. */
const BLOCK_TIME = envNum('BENCH_BLOCK_TIME', 0);
const PAGE = ON_CLUSTER ? 'benchmarks-cluster.md' : BLOCK_TIME > 0 ? 'benchmarks-block-time.md' : 'benchmarks.md';
const CHART = ON_CLUSTER ? 'benchmarks-cluster-throughput.svg' : BLOCK_TIME > 0 ? 'benchmarks-block-time-throughput.svg' : 'benchmarks-throughput.svg';

const elapsed = (t: number) => (performance.now() - t) / 1000;

async function main() {
  const tStart = performance.now();
  const machine = machineInfo();
  console.log(`machine: ${describeMachine(machine)}`);
  console.log(`bench: ${QUICK ? 'quick, ' : ''}rates ${RATES.join(',')} /s, ${SECONDS} s each + drain <= ${DRAIN} s, ${ARRIVALS} arrivals, preload ${PRELOAD}`);
  const dir = mkdtempSync(join(tmpdir(), 'cf-bench-'));
  const stack = await benchStack(dir, BLOCK_TIME > 0 ? { ANVIL_BLOCK_TIME_SECONDS: String(BLOCK_TIME) } : {});
  const stackStartSeconds = elapsed(tStart);
  const stop = () => void stack.stop().finally(() => process.exit(130));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const w = await connectWorld(stack.env);
  try {
    const processes = [...stack.infra.processes, stack.worker, stack.api];
    console.log(`stack up in ${stackStartSeconds.toFixed(0)} s: ${processes.map((p) => p.name).join(', ')}; batch ${stack.config.BATCH_MAX_PAYMENTS} payments or ${stack.config.BATCH_MAX_WAIT_MS} ms, ${stack.config.CONFIRMATIONS} confirmation(s)`);

    const tOnboard = performance.now();
    const merchants: ProvisionedMerchant[] = await mapPool(Array.from({ length: MERCHANTS }), 4, (_, i) => newMerchant(w, `Bench ${i + 1}`, { rateLimits: UNTHROTTLED }));
    const borrowers = await mapPool(Array.from({ length: BORROWERS }), 4, () => onboardBorrower(w, { perPaymentLimit: '1000000', dailyLimit: '1000000000000' }));
    const onboardingSeconds = elapsed(tOnboard);
    console.log(`onboarded ${borrowers.length} borrowers through the real agent flow and ${merchants.length} merchants in ${onboardingSeconds.toFixed(0)} s`);

    const ceilingSizes = QUICK ? QUICK_CEILINGS : FULL_CEILINGS;
    let ceilings = await measureCeilings(w, stack.urls.baseUrl, ceilingSizes);
    console.log(
      `ceilings: store ${ceilings.storeInsertsPerSecond.toFixed(0)} inserts/s, ${ceilings.storeReadsPerSecond.toFixed(0)} reads/s; Temporal ${ceilings.workflowStartsPerSecond.toFixed(0)} starts/s, ` +
        `${ceilings.signalWorkflowsPerSecond.toFixed(0)} start->signal->complete/s, ${ceilings.delayedSignalWorkflowsPerSecond.toFixed(0)} delayed start->signal-with-start->complete/s; API ${ceilings.httpRequestsPerSecond.toFixed(0)} requests/s`,
    );
    const tGas = performance.now();
    const gasReport = await measureSettleBatchGas(stack.urls.rpcUrl, stack.config.CHAIN_ID, QUICK ? { merchants: 10, borrowers: BORROWERS, sizes: [1, 10, 100], rounds: 1 } : { merchants: 10, borrowers: BORROWERS, sizes: [1, 10, 100, 500], rounds: 3 });
    console.log(`gas: x402 exact ${gasReport.exactWarm.toFixed(0)}/payment; settleBatch ${gasReport.warm.map((r) => `${r.label} ${r.gasPerPayment.toFixed(0)}`).join(', ')} (${elapsed(tGas).toFixed(0)} s)`);

    const settings: LevelSettings = {
      w,
      stack,
      processes,
      vouchers: { w, merchants, borrowers, amount: AMOUNT, mcpShare: MCP_VOUCHERS, budgetSeconds: envNum('BENCH_PREP_BUDGET_SECONDS', QUICK ? 10 : 30) },
      metricsUrls: [`${new URL(stack.urls.baseUrl).origin}/metrics`, `http://127.0.0.1:${stack.config.WORKER_METRICS_PORT}/metrics`],
      arrivals: ARRIVALS,
      pollEveryMs: POLL_EVERY_MS,
      maxInFlight: MAX_IN_FLIGHT,
      drainSeconds: DRAIN,
      historySample: QUICK ? 10 : 20,
    };

    // JIT, connection pools and the settlement loop's first start happen here, not in the first level.
    const warm = await runLevel({ ...settings, vouchers: { ...settings.vouchers, mcpShare: 2 }, drainSeconds: Math.min(DRAIN, 10) }, 'warm-up', 5, 3);
    console.log(`warm-up (not reported): ${describeLevel(warm)}`);

    const levels: LevelFigures[] = [];
    for (const rate of RATES) {
      const l = await runLevel(settings, `${rate}/s`, rate, SECONDS);
      console.log(describeLevel(l));
      levels.push(l);
    }

    const peak = peakLevel(levels);
    const normalBase = { ...settings, ...(NORMAL_LONG_POLL_SECONDS > 0 ? { longPollSeconds: NORMAL_LONG_POLL_SECONDS } : {}) };
    const normalSettings = QUICK ? { ...normalBase, vouchers: { ...settings.vouchers, budgetSeconds: Math.min(settings.vouchers.budgetSeconds, 4) } } : normalBase;
    const normal = await runNormalLevels(normalSettings, peak, levels.flatMap((l) => l.openPaymentIds), {
      seconds: NORMAL_SECONDS,
      backlogWaitSeconds: QUICK ? 10 : 30,
      quietWaitSeconds: QUICK ? 20 : 60,
      log: (line) => console.log(line),
    });
    const normalLevels = [normal.half?.level, normal.eighty?.level].filter((l): l is LevelFigures => l !== undefined);

    // The peak's floor, measured again once the pipeline is idle: the ratio is to the mean of both samples.
    const quiet = await waitForQuietPipeline(w, (QUICK ? 30 : 60) * 1000);
    console.log(`pipeline quiet after ${(quiet.waitedMs / 1000).toFixed(1)} s (${quiet.runningPaymentWorkflows} payment workflows still running)`);
    ceilings = await remeasureTemporalCeilings(w, ceilings, ceilingSizes.signalWorkflows, 'after the sweep and the normal levels', quiet);
    console.log(`Temporal ceilings again: ${ceilings.samples?.map((c) => `${c.when} ${c.delayedSignalWorkflowsPerSecond.toFixed(0)}`).join(', ')} delayed/s; mean ${ceilings.delayedSignalWorkflowsPerSecond.toFixed(1)}`);

    const saturation = saturationLevel(levels);
    const overloadRate = saturation.offeredRate * 4;
    let overload = levels.find((l) => l.offeredRate === overloadRate);
    const extraOverload = !overload;
    if (!overload) {
      overload = await runLevel(settings, `${overloadRate}/s (4x saturation)`, overloadRate, SECONDS);
      console.log(describeLevel(overload));
    }
    const reported = [...levels, ...normalLevels, ...(extraOverload ? [overload] : [])];

    let growth: GrowthRun | null = null;
    /**
     * A normal-load level again, once the payment workflows of the levels before have finished (as
     * before the sweep's half level: told after CONFIRMED, spread behind the worker's other work,
     * they would be measured as this level's load).
     */
    const rerunNormal = async (rate: number, share: string, what: string) => {
      const quiet = await waitForQuietPipeline(w, (QUICK ? 20 : 60) * 1000);
      console.log(`before the ${share} level ${what}: ${quiet.runningPaymentWorkflows} payment workflows still running after ${(quiet.waitedMs / 1000).toFixed(1)} s`);
      const level = await runLevel(normalSettings, `${rate.toFixed(1)}/s (${share} peak) ${what}`, rate, NORMAL_SECONDS);
      console.log(describeLevel(level));
      return { level, quiet };
    };
    if (PRELOAD > 0) {
      const settlement = (await agentDeps(w)).settlement;
      const backlogBefore = await waitForStoreBacklog(w, reported.flatMap((l) => l.openPaymentIds), QUICK ? 20 : 60);
      console.log(`before the preload: ${backlogBefore.left} payments neither CONFIRMED nor FAILED after waiting ${backlogBefore.waitedSeconds.toFixed(0)} s`);
      // Each side of the preload is measured next to it: half level, quarter level | preload | quarter
      // level, half level. The capture median's bar is the quarter level's: there a capture's median
      // is mostly its own work (the sweep's 25/s level: 11.7-14.8 ms in eight runs), while at the half
      // level, ~0.9 of two cores, it moved 0.56-1.8x between neighbouring runs of one build with nothing
      // stored in between, so a ratio there could not tell stored data from the machine. (Some runs
      // still read 1.3-1.7 at the quarter level, the API's CPU per payment up after the preload:
      // docs/scaling.md, issue 45, 2026-11-29.)
      const halfRate = normal.half?.level.offeredRate;
      const quarterRate = halfRate === undefined ? undefined : halfRate / 2;
      const emptyHalf = halfRate === undefined ? null : await rerunNormal(halfRate, '0.5x', 'before the preload');
      const emptyQuarter = quarterRate === undefined ? null : await rerunNormal(quarterRate, '0.25x', 'before the preload');
      // The preload always stores its full count, each payment with its side documents (issue 45: a
      // growth step judged on 1 % of its data judged nothing).
      const preload: PreloadResult = { ...(await preloadPayments(w, merchants, borrowers, settlement, PRELOAD, (m) => console.log(m))), backlogBefore };
      if (preload.storedPayments < PRELOAD) throw new Error(`the data-growth preload stored ${preload.storedPayments} of ${PRELOAD} payments: its figures would not be the ones asked for`);
      console.log(`preloaded ${preload.storedPayments} payments in ${preload.seconds.toFixed(1)} s (${preload.paymentsPerSecond.toFixed(0)}/s; ${preload.note})`);
      const stored = `+${Math.round(preload.storedPayments / 1000)}k stored`;
      // Below capacity first (the pipeline idle, as for the sweep's normal levels), then the saturation rate.
      const loadedQuarter = quarterRate === undefined ? null : await rerunNormal(quarterRate, '0.25x', stored);
      if (loadedQuarter) preload.quietBefore = loadedQuarter.quiet;
      const loadedHalf = halfRate === undefined ? null : await rerunNormal(halfRate, '0.5x', stored);
      const half: GrowthRun['half'] = normal.half && emptyHalf && loadedHalf ? { level: loadedHalf.level, empty: emptyHalf.level, sweep: normal.half.level } : null;
      const quarter: GrowthRun['quarter'] = emptyQuarter && loadedQuarter ? { level: loadedQuarter.level, empty: emptyQuarter.level } : null;
      const level = await runLevel(settings, `${saturation.offeredRate}/s ${stored}`, saturation.offeredRate, SECONDS);
      console.log(describeLevel(level));
      growth = { level, preload, half, quarter };
    }

    const summary = summarizeBench(levels, overload, extraOverload, growth, stack.config.BATCH_MAX_WAIT_MS);
    const barList = bars(summary);
    const floor = floorBars({
      peakSettledPerSec: summary.peakSettledPerSec,
      delayedCeilingPerSec: ceilings.delayedSignalWorkflowsPerSecond,
      half: normal.half && { label: normal.half.level.label, figures: normal.half.figures },
      eighty: normal.eighty && { label: normal.eighty.level.label, figures: normal.eighty.figures },
    });
    // In the order they ran: half, quarter | preload | quarter, half, saturation.
    const allLevels = growth ? [...reported, ...[growth.half?.empty, growth.quarter?.empty, growth.quarter?.level, growth.half?.level].filter((l): l is LevelFigures => l !== undefined), growth.level] : reported;
    const blocks = buildBlocks({ summary, bars: barList, floorBars: floor, levels: allLevels, ceilings, gas: gasReport, preload: growth?.preload ?? null, growthBase: saturation, growth: growth?.level ?? null, growthHalf: growth?.half ?? null, growthQuarter: growth?.quarter ?? null });
    console.log(blocks.map(blockText).join('\n'));

    const run: RunSettings = {
      quick: QUICK,
      rates: RATES,
      seconds: SECONDS,
      normalSeconds: NORMAL_SECONDS,
      drainSeconds: DRAIN,
      merchants: MERCHANTS,
      borrowers: BORROWERS,
      arrivals: ARRIVALS,
      pollEveryMs: POLL_EVERY_MS,
      normalLongPollSeconds: NORMAL_LONG_POLL_SECONDS,
      maxInFlight: MAX_IN_FLIGHT,
      mcpVouchersPerLevel: MCP_VOUCHERS,
      preload: PRELOAD,
      batchMaxPayments: stack.config.BATCH_MAX_PAYMENTS,
      batchWindowMs: stack.config.BATCH_MAX_WAIT_MS,
      batchMinPayments: stack.config.BATCH_MIN_PAYMENTS,
      blockTimeSeconds: stack.config.ANVIL_BLOCK_TIME_SECONDS,
      confirmations: stack.config.CONFIRMATIONS,
      stackStartSeconds,
      onboardingSeconds,
      totalSeconds: elapsed(tStart),
    };
    const docs = join(projectRoot(), 'docs');
    const chartPoints = reported.map((l) => ({ offered: l.offeredPerSec, accepted: l.acceptedPerSec, settled: steadySettledRate(l), captureP99Ms: l.captureMs.p99 }));
    writeFileSync(join(docs, CHART), throughputChart(chartPoints, `Open loop, ${MERCHANTS} merchants, ${SECONDS} s per level (${machine.cores} cores)`));
    writeFileSync(join(docs, PAGE), onTopology(benchmarksPage(machine, run, blocks, notes(summary, extraOverload), CHART)));
    console.log(`\nwrote docs/${PAGE} and docs/${CHART}`);
    if (process.env.BENCH_OUT) {
      const out = {
        ...summary,
        peakToCeilingRatio: peakToCeiling(summary.peakSettledPerSec, ceilings.delayedSignalWorkflowsPerSecond),
        peakSustainedSettledPerSec: peak.sustainedSettledPerSec,
        /** Gas per payment of the batches sent during the peak level (issue 45). */
        peakGasPerPayment: peak.gas.gasPerPayment,
        half: normal.half?.figures ?? null,
        eighty: normal.eighty?.figures ?? null,
        bars: barList,
        floorBars: floor,
        levels: allLevels,
        warmUp: warm,
        ceilings,
        gas: gasReport,
        dataGrowthPreload: growth?.preload ?? null,
        settings: run,
        machine,
      };
      writeFileSync(process.env.BENCH_OUT, JSON.stringify(out, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2));
      console.log(`wrote ${process.env.BENCH_OUT}`);
    }
    console.log(`bench done in ${elapsed(tStart).toFixed(0)} s`);
  } finally {
    await w.store.close();
    await w.temporal.connection.close();
    await stack.stop();
    if (process.env.BENCH_KEEP_DATA === '1') console.log(`bench stack data kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** The page names the dev server's parts; on the cluster topology it names the cluster's. */
function onTopology(page: string): string {
  if (!ON_CLUSTER) return page;
  return page
    .replace('(Temporal dev server, FerretDB on SQLite, anvil, one worker, one API process)', '(the cluster topology, tools/stack/cluster: PostgreSQL, the Temporal frontend, history, matching and worker as four processes over 4 history shards, FerretDB on PostgreSQL, anvil, one worker, one API process)')
    .replaceAll('store (FerretDB/SQLite)', 'store (FerretDB/PostgreSQL)')
    .replace('# Benchmarks\n', '# Benchmarks on the cluster topology\n');
}

function notes(s: ReturnType<typeof summarizeBench>, extraOverload: boolean): string[] {
  return [
    'offered/s counts scheduled captures; accepted/s the 200s; shed/s the 503 UNAVAILABLE and 429 answers; any other answer is an error and is listed by status and code.',
    'settled/s (window + drain): payments of the level that a merchant poll saw CONFIRMED before the drain ended, divided by the window; an overloaded level is thereby credited with up to window + drain seconds of settling. The peak, the 4x level, the normal-load rates and data growth use the paced rate (bench/pace.ts: per shard, the median over its rounds of a batch\'s payments over the time since the shard\'s previous confirmation, summed over shards; each level\'s batches are in BENCH_OUT as settledBatches), or the sustained rate where a shard settled the level in one batch, held between the store column (the level\'s own payments confirmed over window + drain, which the pipeline did at least) and the drain-based figure. The sustained rate counts the level\'s payments seen CONFIRMED in the window shifted by the level\'s capture -> CONFIRMED p50 (the steady state, past the pipeline\'s fill), per second of that interval; the store column is the level\'s own payments CONFIRMED in the store when the drain ended, over window + drain.',
    'A level that cannot drain stops at the drain limit: its unfinished payments are its backlog, polling stops, and they keep settling during the next level (the store backlog column shows the carry-over).',
    'Capture latency covers every sent capture; one still unanswered when the drain ended counts as (end - sent), a lower bound, and is also counted as unanswered.',
    'capture -> CONFIRMED is the first poll that saw CONFIRMED minus the capture\'s 200, so it includes up to one poll interval; the store column uses confirmedAt instead.',
    'CPU per settled payment: each process\'s CPU over the level (window + drain) from /proc, with its child processes\' (PostgreSQL\'s per-connection backends under the postmaster: the live ones by parent pid, the exited ones reaped into the parent\'s), divided by the level\'s settled payments; backlog work from earlier levels lands in the level that does it.',
    'Temporal events per payment: the mean history length of ~20 of the level\'s payment workflows plus the events the settlement workflows (settlementShardWorkflow, batcherWorkflow; every run open at the start or started since) added during the level, divided by its settled payments.',
    'Store commands per payment: the growth of x402_store_commands_total on the API\'s and the worker\'s /metrics over the level, divided by settled payments (n/a when the metric is not exposed).',
    "Normal load: after the sweep (and a bounded wait for its backlog), two more open-loop levels offer 0.5x and 0.8x the peak's steady settled/s, merchants polling once a second; shedFraction is the captures answered 503 over those offered. BENCH_OUT carries them as `half` and `eighty`, each with its offered rate over the peak's steady rate (`ofPeakSustained`). Until the fifth round the peak was the drain-based figure (still in BENCH_OUT as `peakSettledByDrainPerSec`), 1.0-1.7x the steady one, which put the 0.8x level at the pipeline's capacity (docs/scaling.md).",
    "The ratio to the floor is the peak's settled/s over the Temporal ceiling measured in the same run (delayed start -> signal-with-start -> complete on the bench's own bare worker, the minimal shape of one payment), so it holds on any machine; BENCH_OUT carries it as `peakToCeilingRatio`. The ceiling is the mean of two samples, one before the levels and one after the sweep and the normal levels, once no payment workflow runs (at most 30 s in a quick run, 60 s in a full one; the wait is in the sample's `quiet`), both in `ceilings.samples`: one short sample moved the ratio by itself (48-70/s between runs of one build).",
    `The overload figure is the level at 4x the saturation rate${extraOverload ? ' (run as an extra level, since the rate list lacked it)' : ''}: the peak level's offered rate, or a lower one from which every level up answered at least ${SATURATED_SHED_SHARE * 100} % of its captures 503 (past capacity the levels settle alike within noise, and 4x the noisiest best of them, 800-1,600/s, measures the bench client). Data growth runs the half level and the quarter level (half its rate) again just before the preload, the quarter and half levels once more after it, then the saturation rate: the capture p50 ratio is the quarter level's loaded run over its run just before the preload (there a capture's median is mostly its own work: the sweep's 25/s level read 11.7-14.8 ms in eight runs of one machine; some runs still read 1.3-1.7 there, with the API's CPU per payment up after the preload, docs/scaling.md "Issue 45 (2026-11-29)"), with the half level's beside it (at ~0.9 of two cores its median moved 0.56-1.8x between neighbouring runs of one build with nothing stored in between, so it cannot tell stored data from the machine; the sweep's half level, before the 0.8x and 4x levels, is shown too); the settled/s ratio is the saturation rate's over the sweep's level at that rate (at capacity the capture median is set by admission and queueing, 0.4-2.7 between runs of one build, and is shown beside it). Each re-run starts once the payment workflows before it have finished.`,
    `Peak steady settled/s was ${s.peakSettledPerSec.toFixed(1)} at ${s.peak.offeredPerSec.toFixed(0)}/s offered (${s.peakSettledByDrainPerSec.toFixed(1)} counting its drain).`,
  ];
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
