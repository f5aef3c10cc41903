/** The bench's tables: bars, the level grid, CPU per process, ceilings, gas, data growth. */
import type { Ceilings } from './ceilings.js';
import type { GasReport } from './gas.js';
import type { PreloadResult } from './growth.js';
import type { LevelFigures } from './level.js';
import { peakToCeiling } from './normal-load.js';
import { gas, num, perSecond, renderGridMarkdown, renderGridText, renderMarkdown, renderText, type Grid, type Row, type Section } from './report.js';
import { steadySettledRate, type Bar, type BenchSummary, type GrowthRun } from './summary.js';

export type Block = { kind: 'section'; section: Section } | { kind: 'grid'; grid: Grid };

export const blockText = (b: Block) => (b.kind === 'section' ? renderText([b.section]) : renderGridText(b.grid));
export const blockMarkdown = (b: Block) => (b.kind === 'section' ? renderMarkdown([b.section]) : renderGridMarkdown(b.grid));

function barSection(list: Bar[], title: string): Section {
  return {
    title,
    rows: list.map(
      (b): Row => ({
        metric: b.metric,
        measured: (b.measured === null ? 'n/a' : `${num(b.measured, b.unit === 'x' || b.unit === '%' ? 2 : 1)} ${b.unit}`) + (b.detail ? ` (${b.detail})` : ''),
        baseline: b.baseline ? `bar ${b.bar}; old code: ${b.baseline}` : `bar ${b.bar}`,
        verdict: b.meets ? 'meets' : 'misses',
      }),
    ),
  };
}

function levelGrid(levels: readonly LevelFigures[]): Grid {
  const row = (name: string, f: (l: LevelFigures) => string) => [name, ...levels.map(f)];
  const errs = (l: LevelFigures) => (l.errorCount === 0 ? '0' : Object.entries(l.errors).map(([k, n]) => `${n} x ${k}`).join('; '));
  return {
    title: 'Levels (open loop; captures polled once a second by their merchant)',
    header: ['metric', ...levels.map((l) => l.label)],
    rows: [
      row('window / drain used (s)', (l) => `${l.windowSeconds} / ${num(l.drainSeconds, 0)}`),
      row('offered /s', (l) => num(l.offeredPerSec)),
      row('accepted /s', (l) => num(l.acceptedPerSec)),
      row('shed 503 UNAVAILABLE /s', (l) => num(l.shedUnavailablePerSec)),
      row('shed 429 /s', (l) => num(l.shedRateLimitedPerSec)),
      row('errors (count by kind)', errs),
      row('unanswered at end / not sent (client cap)', (l) => `${l.unanswered} / ${l.notSent}`),
      row('settled /s (window + drain, per window s)', (l) => num(l.settledPerSec)),
      row('sustained settled /s (lag-shifted window)', (l) => num(l.sustainedSettledPerSec)),
      row('paced settled /s (between batches)', (l) => num(l.pacedSettledPerSec)),
      row('store CONFIRMED growth /s (window + drain)', (l) => num(l.storeConfirmedPerSec)),
      row('capture p50 / p99 / max ms', (l) => `${num(l.captureMs.p50)} / ${num(l.captureMs.p99)} / ${num(l.captureMs.max, 0)}`),
      row('client send lag p99 ms', (l) => num(l.sendLagP99Ms)),
      row('capture wait before the handler: accept queue p99 / max, then p99 ms', (l) => (l.queueMs ? `${num(l.queueMs.acceptP99)} / ${num(l.queueMs.acceptMax, 0)}, ${num(l.queueMs.readP99)}` : 'n/a')),
      row('capture -> CONFIRMED (poll) p50 / p99 s', (l) => `${num(l.confirmS.p50, 2)} / ${num(l.confirmS.p99, 2)}`),
      row('capture -> confirmedAt (store) p50 / p99 s', (l) => `${num(l.storeConfirmS.p50, 2)} / ${num(l.storeConfirmS.p99, 2)}`),
      row('poll p50 / p99 ms', (l) => `${num(l.pollMs.p50)} / ${num(l.pollMs.p99)}`),
      row('event-loop delay p99 / max ms: API, worker', (l) => (l.eventLoopDelayMs ?? []).map((d) => `${d.p99 === null ? 'n/a' : num(d.p99)} / ${d.max === null ? 'n/a' : num(d.max, 0)}`).join(', ') || 'n/a'),
      row('polls (non-200)', (l) => `${l.polls} (${Object.values(l.pollFailures).reduce((a, b) => a + b, 0)})`),
      row('backlog at end: level / whole store', (l) => `${l.backlog} / ${l.storeBacklog}`),
      row('store backlog by status', (l) => Object.entries(l.storeBacklogByStatus).map(([k, n]) => `${k} ${n}`).join(', ') || '-'),
      row('refused captures that became payments', (l) => String(l.refusedButConsumed)),
      row('CPU ms per settled payment (stack)', (l) => num(l.cpuMsPerSettledTotal)),
      row('Temporal events per payment (own + settlement share)', (l) => `${num(l.temporal.perPayment)} (${num(l.temporal.paymentEvents)} + ${num(l.temporal.settlementEvents, 0)}/${l.settled})`),
      row('store commands per payment', (l) => (l.storeCommandsPerPayment === null ? 'n/a' : num(l.storeCommandsPerPayment))),
      row('shard round, mean ms: gather / submit / confirm / end / notify (beside the next batch)', shardRound),
      row('batch end, mean ms: holds / ledger / other steps', endSteps),
      row('shard workflow tasks: count, mean wait to start / run ms', shardWorkflowTasks),
      row('gas per payment (product batches)', (l) => (Number.isFinite(l.gas.gasPerPayment) ? `${gas(l.gas.gasPerPayment)} (${l.gas.batches} tx)` : 'n/a')),
      row('vouchers: mcp / intent / bulk', (l) => `${l.vouchers.counts.mcp} / ${l.vouchers.counts.intent} / ${l.vouchers.counts.bulk}`),
    ],
  };
}

function shardRound(l: LevelFigures): string {
  const a = l.shardRounds?.activities;
  if (!a) return 'n/a';
  const ms = (type: string) => (a[type] ? num(a[type].runMs, 0) : '-');
  return ['gatherBatch', 'submitShardBatch', 'confirmShardBatch', 'endShardBatch', 'notifyShardBatch'].map(ms).join(' / ');
}

function shardWorkflowTasks(l: LevelFigures): string {
  const t = l.shardRounds?.activities['workflow task'];
  return t ? `${t.count}, ${num(t.waitMs, 0)} / ${num(t.runMs, 0)}` : 'n/a';
}

function endSteps(l: LevelFigures): string {
  const steps = l.batchEndSteps ?? {};
  if (Object.keys(steps).length === 0) return 'n/a';
  const mean = (step: string) => steps[step]?.meanMs;
  const other = Object.entries(steps)
    .filter(([step]) => !['holds', 'ledger'].includes(step))
    .reduce((sum, [, s]) => sum + s.meanMs, 0);
  return [mean('holds'), mean('ledger'), other].map((v) => (v === undefined ? '-' : num(v, 0))).join(' / ');
}

function cpuGrid(levels: readonly LevelFigures[]): Grid {
  const names = [...new Set(levels.flatMap((l) => Object.keys(l.cpuMsPerSettled)))];
  return {
    title: 'CPU ms per settled payment, by process (from /proc; the bench client shares the 2 cores)',
    header: ['process', ...levels.map((l) => l.label)],
    rows: names.map((n) => [n, ...levels.map((l) => num(l.cpuMsPerSettled[n]))]),
  };
}

function storeCommandGrid(levels: readonly LevelFigures[]): Grid | null {
  const names = [...new Set(levels.flatMap((l) => Object.keys(l.storeCommands ?? {})))].sort();
  if (names.length === 0) return null;
  return {
    title: 'Store commands per settled payment, by command and collection (x402_store_commands_total, API + worker)',
    header: ['command collection', ...levels.map((l) => l.label)],
    rows: names.map((n) => [n, ...levels.map((l) => (l.storeCommands ? num((l.storeCommands[n] ?? 0) / l.settled, 2) : 'n/a'))]),
  };
}

function ceilingSection(c: Ceilings, peakSettledPerSec: number): Section {
  const share = (ceiling: number) => `; the peak's ${num(peakSettledPerSec)} /s settled is ${num(peakToCeiling(peakSettledPerSec, ceiling), 2)} x this`;
  const samples = c.samples && c.samples.length > 1 ? c.samples : null;
  const each = (pick: (x: NonNullable<Ceilings['samples']>[number]) => number) => (samples ? `mean of ${samples.map((x) => `${num(pick(x))} (${x.when})`).join(' and ')}; ` : '');
  return {
    title: 'Ceilings of the parts alone, same run',
    rows: [
      { metric: 'store (FerretDB/SQLite) unique inserts, 10 in flight', measured: perSecond(c.storeInsertsPerSecond), baseline: 'one SQLite writer at a time' },
      { metric: 'store reads by _id, 10 in flight', measured: perSecond(c.storeReadsPerSecond), baseline: '' },
      { metric: 'Temporal workflow starts (no worker), 10 in flight', measured: perSecond(c.workflowStartsPerSecond), baseline: 'one per capture' },
      {
        metric: 'Temporal start -> 1 signal -> complete, 100 in flight',
        measured: perSecond(c.signalWorkflowsPerSecond),
        baseline: `${each((x) => x.signalWorkflowsPerSecond)}bench's own in-process worker (bundled in ${c.workerStartSeconds.toFixed(1)} s)${share(c.signalWorkflowsPerSecond)}`,
      },
      {
        metric: 'Temporal delayed start -> signal-with-start -> complete, 100 in flight',
        measured: perSecond(c.delayedSignalWorkflowsPerSecond),
        baseline: `${each((x) => x.delayedSignalWorkflowsPerSecond)}one workflow task per workflow, as payment workflows run${share(c.delayedSignalWorkflowsPerSecond)}`,
      },
      { metric: 'API cheapest route (GET /supported), 10 in flight', measured: perSecond(c.httpRequestsPerSecond), baseline: 'Koa + logging + metrics' },
    ],
  };
}

function gasSection(g: GasReport, levels: readonly LevelFigures[]): Section {
  const exact = `x402 exact: ${gas(g.exactWarm)}`;
  const rows: Row[] = g.warm.map((r) => ({ metric: `settleBatch, ${r.label} (${g.merchants} merchants, ${g.borrowers} borrowers)`, measured: `${gas(r.gasPerPayment)}/payment`, baseline: exact }));
  rows.push(
    { metric: `settleBatch, ${g.cold.label}`, measured: `${gas(g.cold.gasPerPayment)}/payment`, baseline: `x402 exact, first payout to a merchant: ${gas(g.exactCold)}` },
    { metric: 'x402 exact transferWithAuthorization (measured)', measured: `${gas(g.exactWarm)}/payment`, baseline: 'one transaction per payment' },
  );
  const batches = levels.reduce((a, l) => a + l.gas.batches, 0);
  const payments = levels.reduce((a, l) => a + l.gas.payments, 0);
  const sizes = levels.flatMap((l) => l.gas.sizes);
  const weighted = levels.reduce((a, l) => a + (Number.isFinite(l.gas.gasPerPayment) ? l.gas.gasPerPayment * l.gas.payments : 0), 0);
  if (payments > 0) {
    rows.push({ metric: "product's own batches during the levels", measured: `${gas(weighted / payments)}/payment`, baseline: `${batches} batches, sizes ${Math.min(...sizes)}..${Math.max(...sizes)}` });
  }
  return { title: 'Gas per payment', rows };
}

function growthSection(s: BenchSummary, preload: PreloadResult | null, empty: LevelFigures, loaded: LevelFigures | null, half: GrowthRun['half'], quarter: GrowthRun['quarter']): Section {
  if (!preload || !loaded) return { title: 'Data growth', rows: [{ metric: 'not run', measured: '', baseline: '' }] };
  const halfRows: Row[] = half
    ? [
        {
          metric: `capture p50 / p99 ms at ${num(half.empty.offeredPerSec)}/s offered (0.5x peak): empty -> loaded`,
          measured: `${num(half.empty.captureMs.p50)} / ${num(half.empty.captureMs.p99)} -> ${num(half.level.captureMs.p50)} / ${num(half.level.captureMs.p99)}`,
          baseline: `p50 ratio ${num(s.dataGrowth.captureP50RatioAtHalf ?? undefined, 2)} (empty = the half level re-run just before the preload; at ~0.9 of two cores this median moves 0.56-1.8x between neighbouring runs)`,
        },
        {
          metric: "capture p50 ms at 0.5x peak: the sweep's half level -> loaded",
          measured: `${num(half.sweep.captureMs.p50)} -> ${num(half.level.captureMs.p50)}`,
          baseline: `ratio ${num(s.dataGrowth.captureP50RatioToSweep ?? undefined, 2)} (that level ran minutes earlier, before the 0.8x and 4x levels)`,
        },
        { metric: 'poll p99 ms at 0.5x peak: empty -> loaded', measured: `${num(half.empty.pollMs.p99)} -> ${num(half.level.pollMs.p99)}`, baseline: '' },
      ]
    : [];
  const quarterRows: Row[] = quarter
    ? [
        {
          metric: `capture p50 / p99 ms at ${num(quarter.empty.offeredPerSec)}/s offered (0.25x peak): empty -> loaded`,
          measured: `${num(quarter.empty.captureMs.p50)} / ${num(quarter.empty.captureMs.p99)} -> ${num(quarter.level.captureMs.p50)} / ${num(quarter.level.captureMs.p99)}`,
          baseline: `p50 ratio ${num(s.dataGrowth.captureP50Ratio, 2)} (the bar's: here a capture's median is mostly its own work; empty = the quarter level re-run just before the preload)`,
        },
        { metric: 'poll p99 ms at 0.25x peak: empty -> loaded', measured: `${num(quarter.empty.pollMs.p99)} -> ${num(quarter.level.pollMs.p99)}`, baseline: '' },
      ]
    : [];
  return {
    title: `Data growth: the quarter and half levels and the saturation rate again after preloading ${preload.storedPayments.toLocaleString('en-US')} payments`,
    rows: [
      { metric: 'preload', measured: `${preload.seconds.toFixed(1)} s`, baseline: `${preload.paymentsPerSecond.toFixed(0)} payments/s inserted; ${preload.note}` },
      {
        metric: 'payments neither CONFIRMED nor FAILED before the preload',
        measured: String(preload.backlogBefore?.left ?? 'n/a'),
        baseline: `after a bounded wait of ${num(preload.backlogBefore?.waitedSeconds, 0)} s`,
      },
      {
        metric: 'payment workflows still running when the re-runs started',
        measured: String(preload.quietBefore?.runningPaymentWorkflows ?? 'n/a'),
        baseline: `after a bounded wait of ${num(preload.quietBefore ? preload.quietBefore.waitedMs / 1000 : undefined, 1)} s (as before the sweep's half level)`,
      },
      ...quarterRows,
      ...halfRows,
      { metric: `steady settled /s at ${empty.offeredRate}/s offered (saturation): empty -> loaded`, measured: `${num(steadySettledRate(empty))} -> ${num(steadySettledRate(loaded))}`, baseline: `ratio ${num(s.dataGrowth.settledPerSecRatio, 2)}` },
      { metric: `capture p50 ms at ${empty.offeredRate}/s: empty -> loaded`, measured: `${num(empty.captureMs.p50)} -> ${num(loaded.captureMs.p50)}`, baseline: `ratio ${num(s.dataGrowth.captureP50RatioAtSaturation, 2)} (set by admission and queueing at capacity)` },
      { metric: `capture p99 ms at ${empty.offeredRate}/s: empty -> loaded`, measured: `${num(empty.captureMs.p99)} -> ${num(loaded.captureMs.p99)}`, baseline: '' },
      { metric: `poll p99 ms at ${empty.offeredRate}/s: empty -> loaded`, measured: `${num(empty.pollMs.p99)} -> ${num(loaded.pollMs.p99)}`, baseline: '' },
    ],
  };
}

export function buildBlocks(o: {
  summary: BenchSummary;
  bars: Bar[];
  floorBars: Bar[];
  levels: readonly LevelFigures[];
  ceilings: Ceilings;
  gas: GasReport;
  preload: PreloadResult | null;
  /** The sweep's level that data growth re-runs (the saturation rate). */
  growthBase: LevelFigures;
  growth: LevelFigures | null;
  growthHalf: GrowthRun['half'];
  growthQuarter: GrowthRun['quarter'];
}): Block[] {
  const blocks: Block[] = [
    { kind: 'section', section: barSection(o.floorBars, 'Bars at the Temporal floor: the ratio to the ceiling and normal load (a missed bar is reported, not failed)') },
    { kind: 'section', section: barSection(o.bars, 'Bars (a missed bar is reported, not failed)') },
    { kind: 'grid', grid: levelGrid(o.levels) },
    { kind: 'grid', grid: cpuGrid(o.levels) },
  ];
  const commands = storeCommandGrid(o.levels);
  if (commands) blocks.push({ kind: 'grid', grid: commands });
  blocks.push(
    { kind: 'section', section: ceilingSection(o.ceilings, o.summary.peakSettledPerSec) },
    { kind: 'section', section: gasSection(o.gas, o.levels) },
    { kind: 'section', section: growthSection(o.summary, o.preload, o.growthBase, o.growth, o.growthHalf, o.growthQuarter) },
  );
  return blocks;
}
