/**
 * `npm run bench`: the figures issue 4 asks for, on a real stack of its own (free ports, temp dir),
 * printed as a table beside their bars and baselines and written to docs/benchmarks.md.
 * Asserts nothing: a missed bar is reported, not failed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../src/config/paths.js';
import { throwawayStackSource } from '../src/stack/throwaway-source.js';
import { startStack, type StackHandle } from '../src/stack/stack.js';
import { connectWorld, newMerchant, UNTHROTTLED, type TestBorrower, type TestMerchant, type World } from '../test/helpers/world.js';
import { onboardBorrower } from '../test/helpers/onboarding.js';
import { confirmationLatency, prepareCaptures, runCaptureLevel, type CaptureLevelResult } from './capture-load.js';
import { cpuBetween, snapshot } from './cpu.js';
import { measureSettleBatchGas } from './gas.js';
import { describeMachine, machineInfo } from './machine.js';
import { productBatches } from './product-batches.js';
import { atLeast, atMost, gas, ms, perSecond, renderMarkdown, renderText, seconds, type Row, type Section } from './report.js';
import { mapPool, type LatencySummary } from './stats.js';
import { measureCeilings, type Ceilings } from './ceilings.js';
import { phaseProfile, type PhaseProfile } from './phases.js';

const LEVELS = (process.env.BENCH_LEVELS ?? '1,10,50').split(',').map(Number);
const CAPTURES = (process.env.BENCH_CAPTURES ?? '300,1500,2500').split(',').map(Number);
const BORROWERS = 50;
const GAS_MERCHANTS = 10;
const GAS_SIZES = [1, 10, 100, 500];
const AMOUNT = '1000';
const BARS = { p50Ms: 10, p99Ms: 50, perSecond: 300, gasPerPayment: 8000 };

async function benchStack(dir: string): Promise<StackHandle> {
  const source: NodeJS.ProcessEnv = {
    ...(await throwawayStackSource(dir)),
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    SERVER_TIMING: '1',
    DEFAULT_CREDIT_LIMIT: '1000000000000',
  };
  return startStack({ source, quiet: true, headless: true });
}

interface LevelFigures {
  level: CaptureLevelResult;
  confirm: LatencySummary;
  cpu: Map<string, number>;
  phases: PhaseProfile;
}

async function main() {
  const machine = machineInfo();
  console.log(`machine: ${describeMachine(machine)}`);
  const dir = mkdtempSync(join(tmpdir(), 'cf-bench-'));
  const stack = await benchStack(dir);
  const stop = () => void stack.stop().finally(() => process.exit(130));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const w = await connectWorld(stack.env);
  try {
    const processes = [...stack.infra.processes, stack.worker, stack.api];
    console.log(`stack up: ${processes.map((p) => p.name).join(', ')}; batch ${stack.config.BATCH_MAX_PAYMENTS} payments or ${stack.config.BATCH_MAX_WAIT_MS} ms, ${stack.config.CONFIRMATIONS} confirmation(s)`);
    const merchants: TestMerchant[] = [];
    for (let i = 0; i < Math.max(...LEVELS); i++) merchants.push(await newMerchant(w, `Bench ${i + 1}`, { rateLimits: UNTHROTTLED }));
    const borrowers = await mapPool(Array.from({ length: BORROWERS }), 4, () => onboardBorrower(w, { perPaymentLimit: '1000000', dailyLimit: '1000000000000' }));
    console.log(`onboarded ${borrowers.length} borrowers through the real agent flow; ${merchants.length} merchants with bench rate limits`);
    const startBlock = await w.publicClient.getBlockNumber();

    await warmUp(w, stack, merchants, borrowers);
    const figures: LevelFigures[] = [];
    for (const [i, c] of LEVELS.entries()) {
      const total = CAPTURES[i] ?? 300;
      const queues = await prepareCaptures(w, merchants.slice(0, c), borrowers, Math.ceil(total / c), AMOUNT);
      const before = snapshot(processes);
      const cpu0 = process.cpuUsage();
      const level = await runCaptureLevel(stack.urls.baseUrl, queues);
      const cpu = cpuBetween(before, snapshot(processes));
      const own = process.cpuUsage(cpu0);
      cpu.set('bench client', (own.user + own.system) / 1e6);
      const confirm = await confirmationLatency(w, level.accepted, 10 * 60_000);
      const phases = phaseProfile(level.timings);
      figures.push({ level, confirm, cpu, phases });
      console.log(`${c} merchant(s): ${level.captures} captures, p50 ${ms(level.latencyMs.p50)}, p99 ${ms(level.latencyMs.p99)}, ${perSecond(level.perSecond)}; capture->CONFIRMED p50 ${seconds(confirm.p50)}`);
      console.log(`  phases p50: ${phases.map((p) => `${p.phase} ${p.p50.toFixed(1)}`).join(', ')}`);
    }
    const ceilings = await measureCeilings(w, stack.urls.baseUrl);
    console.log(`ceilings: store ${ceilings.storeInsertsPerSecond.toFixed(0)} inserts/s, ${ceilings.storeReadsPerSecond.toFixed(0)} reads/s; Temporal ${ceilings.workflowStartsPerSecond.toFixed(0)} starts/s; API ${ceilings.httpRequestsPerSecond.toFixed(0)} requests/s`);
    const batches = await productBatches(w, startBlock);
    console.log(`product batches: ${batches.batches} settling ${batches.payments} payments`);
    const gasReport = await measureSettleBatchGas(stack.urls.rpcUrl, stack.config.CHAIN_ID, { merchants: GAS_MERCHANTS, borrowers: BORROWERS, sizes: GAS_SIZES, rounds: 3 });

    const sections = [...buildSections(figures, batches, gasReport), ceilingSection(ceilings)];
    const text = renderText(sections);
    console.log(text);
    writeFileSync(join(projectRoot(), 'docs', 'benchmarks.md'), markdown(machine, stack, sections, figures));
    console.log('\nwrote docs/benchmarks.md');
  } finally {
    await w.store.close();
    await w.temporal.connection.close();
    await stack.stop();
    if (process.env.BENCH_KEEP_DATA === '1') console.log(`bench stack data kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** JIT, connection pools and the batcher's first start happen here, not in the first measured level. */
async function warmUp(w: World, stack: StackHandle, merchants: TestMerchant[], borrowers: TestBorrower[]) {
  const queues = await prepareCaptures(w, merchants.slice(0, 5), borrowers, 10, AMOUNT);
  const level = await runCaptureLevel(stack.urls.baseUrl, queues);
  await confirmationLatency(w, level.accepted, 5 * 60_000);
}

function buildSections(figures: LevelFigures[], batches: Awaited<ReturnType<typeof productBatches>>, g: Awaited<ReturnType<typeof measureSettleBatchGas>>): Section[] {
  const capture: Row[] = [];
  for (const { level, confirm } of figures) {
    const c = level.merchants;
    const at10 = c === 10;
    capture.push(
      { metric: `capture p50 @ ${c} merchant(s)`, measured: ms(level.latencyMs.p50), baseline: at10 ? `bar <= ${BARS.p50Ms} ms` : '', verdict: at10 ? atMost(level.latencyMs.p50, BARS.p50Ms) : '' },
      { metric: `capture p95 @ ${c}`, measured: ms(level.latencyMs.p95), baseline: '' },
      { metric: `capture p99 @ ${c}`, measured: ms(level.latencyMs.p99), baseline: at10 ? `bar <= ${BARS.p99Ms} ms` : '', verdict: at10 ? atMost(level.latencyMs.p99, BARS.p99Ms) : '' },
      { metric: `throughput @ ${c} (${level.captures} captures)`, measured: perSecond(level.perSecond), baseline: `bar >= ${BARS.perSecond} /s`, verdict: atLeast(level.perSecond, BARS.perSecond) },
      { metric: `capture -> CONFIRMED p50 / p99 @ ${c}`, measured: `${seconds(confirm.p50)} / ${seconds(confirm.p99)}`, baseline: 'batch window + 1 confirmation' },
    );
  }
  const exact = `x402 exact: ${gas(g.exactWarm)}`;
  const gasRows: Row[] = g.warm.map((r) => ({
    metric: `settleBatch, ${r.label} (${g.merchants} merchants, ${g.borrowers} borrowers)`,
    measured: `${gas(r.gasPerPayment)}/payment`,
    baseline: r.batchSize === 100 ? `bar <= ${BARS.gasPerPayment}; ${exact}` : exact,
    verdict: r.batchSize === 100 ? atMost(r.gasPerPayment, BARS.gasPerPayment) : '',
  }));
  gasRows.push(
    { metric: `settleBatch, ${g.cold.label}`, measured: `${gas(g.cold.gasPerPayment)}/payment`, baseline: `x402 exact, first payout to a merchant: ${gas(g.exactCold)}` },
    { metric: `x402 exact transferWithAuthorization (measured)`, measured: `${gas(g.exactWarm)}/payment`, baseline: 'one transaction per payment' },
    {
      metric: `product's own batches during the capture runs`,
      measured: `${gas(batches.gasPerPayment)}/payment`,
      baseline: `${batches.batches} batches, sizes ${Math.min(...batches.sizes)}..${Math.max(...batches.sizes)}`,
    },
  );
  return [
    { title: 'Capture (POST /facilitator/capture, closed loop, one voucher per request)', rows: capture },
    { title: 'Gas per payment', rows: gasRows },
  ];
}

/**
 * Store writes one settled payment costs: in the API the rate-limit slot, the idempotency key, the
 * payment and the spend intent's fate; in the worker three projections, the settlement claim and
 * the debt booking (lease insert, borrower write, lease delete).
 */
const STORE_WRITES_PER_PAYMENT = 11;

function ceilingSection(c: Ceilings): Section {
  const bound = c.storeInsertsPerSecond / STORE_WRITES_PER_PAYMENT;
  return {
    title: 'Ceilings of the parts alone (10 in flight), and the bound they set',
    rows: [
      { metric: 'store (FerretDB/SQLite) unique inserts', measured: perSecond(c.storeInsertsPerSecond), baseline: 'one SQLite writer at a time' },
      { metric: 'store reads by _id', measured: perSecond(c.storeReadsPerSecond), baseline: '' },
      { metric: 'Temporal workflow starts (no worker)', measured: perSecond(c.workflowStartsPerSecond), baseline: 'one per capture' },
      { metric: 'API cheapest route (GET /supported)', measured: perSecond(c.httpRequestsPerSecond), baseline: 'Koa + logging + metrics' },
      {
        metric: `captures/s the store alone allows (${STORE_WRITES_PER_PAYMENT} writes per settled payment)`,
        measured: perSecond(bound),
        baseline: `bar >= ${BARS.perSecond} /s`,
        verdict: atLeast(bound, BARS.perSecond),
      },
    ],
  };
}

function cpuTable(figures: LevelFigures[]): string {
  const names = [...new Set(figures.flatMap((f) => [...f.cpu.keys()]))];
  const out = ['| process | ' + figures.map((f) => `CPU ms per capture @ ${f.level.merchants}`).join(' | ') + ' |', '|---|' + figures.map(() => '---:').join('|') + '|'];
  for (const n of names) out.push(`| ${n} | ` + figures.map((f) => ((f.cpu.get(n) ?? Number.NaN) * 1000 / f.level.captures).toFixed(2)).join(' | ') + ' |');
  return out.join('\n');
}

function phaseTable(figures: LevelFigures[]): string {
  const names = [...new Set(figures.flatMap((f) => f.phases.map((p) => p.phase)))];
  const out = ['| phase (Server-Timing) | ' + figures.map((f) => `p50 / p99 ms @ ${f.level.merchants}`).join(' | ') + ' |', '|---|' + figures.map(() => '---:').join('|') + '|'];
  for (const n of names) {
    out.push(`| ${n} | ` + figures.map((f) => { const p = f.phases.find((x) => x.phase === n); return p ? `${p.p50.toFixed(1)} / ${p.p99.toFixed(1)}` : ''; }).join(' | ') + ' |');
  }
  return out.join('\n');
}

function markdown(machine: ReturnType<typeof machineInfo>, stack: StackHandle, sections: Section[], figures: LevelFigures[]): string {
  return [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (bench/run.ts) from one run; rerun it to refresh this page. The bench starts a stack of its own',
    '(Temporal dev server, FerretDB on SQLite, anvil, one worker, one API process) on free ports, raises the bench merchants\'',
    'rate limits with per-merchant limits, onboards borrowers and prepares every voucher through the real `prepare_x402_payment`,',
    'then captures over HTTP. Bars are the ones issue 4 sets; the x402 `exact` baseline is measured in the same run on the same anvil.',
    '',
    `- Machine: ${describeMachine(machine)}`,
    `- Date: ${machine.date}`,
    `- Stack: batch ${stack.config.BATCH_MAX_PAYMENTS} payments or ${stack.config.BATCH_MAX_WAIT_MS} ms, ${stack.config.CONFIRMATIONS} confirmation(s); the load generator runs on the same 2 cores.`,
    '',
    renderMarkdown(sections),
    '### Where a capture\'s time goes',
    '',
    'Server-side phases of the capture handler (the API sends `Server-Timing` when `SERVER_TIMING=1`):',
    '',
    phaseTable(figures),
    '',
    'CPU each process spent per capture during the measured window (from /proc; the worker, Temporal and FerretDB also',
    'process the payment workflows and batches the captures started):',
    '',
    cpuTable(figures),
    '',
  ].join('\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
