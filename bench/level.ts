/**
 * One load level: vouchers prepared (outside the window), the open-loop run with merchant polling,
 * then every figure the level report needs, read from the client's records, /proc, the store,
 * Temporal, the metrics endpoints and the chain.
 */
import type { StackHandle } from '../tools/stack/stack.js';
import type { World } from '../tools/harness/world.js';
import { withBatchOutcomes } from '../src/store/payment-outcomes.js';
import { findPayments } from '../src/store/payments.js';
import { findBatches } from '../src/store/settlement/batches.js';
import { cpuBetween, snapshot } from './cpu.js';
import { planArrivals, runOpenLoop, type ArrivalKind, type CaptureRecord, type OpenLoopResult } from './open-loop.js';
import { phaseProfile, type PhaseProfile } from './phases.js';
import { batchPacePerSec, type SettledBatch } from './pace.js';
import { productBatches } from './product-batches.js';
import { counterDelta, scrapeCounter, scrapeGaugesPerUrl, total, type CounterSample } from './prom.js';
import { summarize } from './stats.js';
import { paymentHistoryEvents, settlementEventsSince, settlementRunsNow } from './temporal-events.js';
import { readShardHistories, type ShardRounds } from './shard-rounds.js';
import { prepareVouchers, releaseUnused, type VoucherBatch, type VoucherSource } from './vouchers.js';

export interface LevelSettings {
  w: World;
  stack: StackHandle;
  vouchers: VoucherSource;
  processes: readonly { name: string; pid: number }[];
  metricsUrls: readonly string[];
  arrivals: ArrivalKind;
  pollEveryMs: number;
  /** Set: merchants long-poll (`Prefer: wait=N`) as the SDK does, every other one or all (longPollShare), instead of a GET every pollEveryMs. */
  longPollSeconds?: number;
  longPollShare?: 1 | 0.5;
  maxInFlight: number;
  drainSeconds: number;
  historySample: number;
}

export interface LevelFigures {
  label: string;
  offeredRate: number;
  windowSeconds: number;
  /** How long the drain actually ran (it ends early once everything is terminal). */
  drainSeconds: number;
  vouchers: Pick<VoucherBatch, 'counts' | 'perSecond' | 'seconds'>;
  offered: number;
  offeredPerSec: number;
  sent: number;
  /** Not sent because the client's in-flight cap was reached. */
  notSent: number;
  accepted: number;
  acceptedPerSec: number;
  shedUnavailable: number;
  shedRateLimited: number;
  shedPerSec: number;
  shedUnavailablePerSec: number;
  shedRateLimitedPerSec: number;
  /** Other non-200 answers and network errors, by `status code`. */
  errors: Record<string, number>;
  errorCount: number;
  /** Sent but still unanswered when the drain ended (aborted). */
  unanswered: number;
  /** This level's payments a poll saw CONFIRMED before the drain ended. */
  settled: number;
  failed: number;
  settledPerSec: number;
  /**
   * The steady settlement rate: this level's payments seen CONFIRMED during the window shifted by
   * the pipeline's lag (the level's capture -> CONFIRMED p50), per second of that interval.
   */
  sustainedSettledPerSec: number;
  /** The pace of the level's settlement batches (bench/pace.ts); NaN when a shard settled them in one batch. */
  pacedSettledPerSec: number;
  /** The same pace timed by the blocks' timestamps (whole seconds), as the bench did before it read the shards' histories. */
  pacedByBlockTimePerSec: number;
  /** The batches that confirmed the level's payments, as [shard, confirmed at (ms after the level began), the level's payments in it]. */
  settledBatches: [number, number, number][];
  /** This level's payments CONFIRMED in the store when the drain ended, over window + drain. */
  storeConfirmedPerSec: number;
  /** Over every sent capture; one still unanswered at the end counts as (end - sent), a lower bound. */
  captureMs: { p50: number; p99: number; max: number };
  /** The slowest capture answer of each second of the window, by when it was sent (where a tail sits: a level's start or throughout). */
  captureMaxMsBySecond: number[];
  sendLagP99Ms: number;
  /** Capture 200 -> first poll that saw CONFIRMED. */
  confirmS: { p50: number; p99: number; max: number };
  /** Capture 200 -> the store's confirmedAt (updatedAt when absent). */
  storeConfirmS: { p50: number; p99: number };
  pollMs: { p50: number; p99: number };
  polls: number;
  pollFailures: Record<string, number>;
  /** This level's accepted payments not CONFIRMED when it ended. */
  backlog: number;
  /** Every payment in the store neither CONFIRMED nor FAILED when the level ended. */
  storeBacklog: number;
  storeBacklogByStatus: Record<string, number>;
  /** Accepted payments of the level the store had not ended when its figures were read. */
  openPaymentIds: string[];
  cpuMsPerSettled: Record<string, number>;
  /** Summed over the stack's processes (the bench client not included). */
  cpuMsPerSettledTotal: number;
  temporal: { paymentEvents: number; sampled: number; settlementEvents: number; settlementRuns: number; perPayment: number };
  storeCommands: Record<string, number> | null;
  storeCommandsPerPayment: number | null;
  /**
   * Event-loop delay over the level (window and drain) of each process behind metricsUrls, in their
   * order (API, worker): prom-client's monitor resets at every scrape, and the one before the level
   * is the store-command scrape.
   */
  eventLoopDelayMs: { p99: number | null; max: number | null }[];
  /** Garbage collection over the level (window and drain), per process as eventLoopDelayMs: pauses and their total by kind (minor, major, ...). */
  gc: Record<string, { count: number; totalMs: number }>[];
  gas: { batches: number; payments: number; gasPerPayment: number; sizes: number[] };
  /** Server-Timing phases of accepted captures (p50/p99 each). */
  phases: PhaseProfile;
  /** Every answered capture's wait before its handler ran (shed ones included): in the API's accept queue, then until the route began. */
  queueMs: { acceptP99: number; acceptMax: number; readP99: number };
  releasedHolds: number;
  /** The shard workflows' activities during the level (null when their histories could not be read). */
  shardRounds: ShardRounds | null;
  /** The worker's batch ends during the level, by step (x402_batch_end_step_seconds): count and mean ms. */
  batchEndSteps: Record<string, { count: number; meanMs: number }>;
  /** Captures answered with a refusal whose spend intent was consumed by a payment all the same. */
  refusedButConsumed: number;
}

const per = (n: number, d: number) => (d > 0 ? n / d : Number.NaN);

/**
 * The level's own accepted payments as the store has them, each with its claimed batch's outcome,
 * read by ids (the bench must not scan the payments table: FerretDB scans in full, which would
 * dwarf the product's work once data is preloaded).
 */
async function storeDocs(w: World, accepted: readonly CaptureRecord[]) {
  return withBatchOutcomes(w.store.c, await findPayments(w.store.c, accepted.map((r) => r.paymentId as string)));
}

/**
 * The batches that confirmed the level's payments: each one's shard and confirmation time, and how
 * many of the level's payments it held. The time is when the shard recorded the confirmation, from
 * its history (`confirmedAtMs`); the record's block timestamp, whole seconds, only where that is missing.
 */
async function settledBatches(w: World, docs: Awaited<ReturnType<typeof storeDocs>>, confirmedAtMs: ReadonlyMap<string, number>): Promise<(SettledBatch & { blockTimeMs: number })[]> {
  const perBatch = new Map<string, number>();
  for (const d of docs) if (d.status === 'CONFIRMED' && d.batchId) perBatch.set(d.batchId, (perBatch.get(d.batchId) ?? 0) + 1);
  const batches = await findBatches(w.store.c, [...perBatch.keys()]);
  return batches
    .filter((b) => b.confirmedAt)
    .map((b) => ({
      shard: b.shard,
      confirmedAtMs: confirmedAtMs.get(b._id) ?? (b.confirmedAt as Date).getTime(),
      blockTimeMs: (b.confirmedAt as Date).getTime(),
      payments: perBatch.get(b._id) ?? 0,
    }));
}

/** The store's confirmation time of each accepted payment, from confirmedAt (or updatedAt). */
function storeConfirmations(docs: Awaited<ReturnType<typeof storeDocs>>, accepted: readonly CaptureRecord[]): number[] {
  const at = new Map(docs.filter((d) => d.status === 'CONFIRMED').map((d) => [d._id, (d.confirmedAt ?? d.updatedAt).getTime()]));
  const out: number[] = [];
  for (const r of accepted) {
    const t = at.get(r.paymentId as string);
    if (t !== undefined) out.push((t - (r.acceptedAtEpochMs as number)) / 1000);
  }
  return out;
}

const msOf = (seconds: number | null | undefined) => (seconds === null || seconds === undefined || !Number.isFinite(seconds) ? null : seconds * 1000);

const LAG_P99 = 'x402_process_nodejs_eventloop_lag_p99_seconds';
const LAG_MAX = 'x402_process_nodejs_eventloop_lag_max_seconds';
const GC_SECONDS = 'x402_process_nodejs_gc_duration_seconds';

/** A histogram's _sum and _count series by label, as scraped. */
type HistogramSums = { sum: CounterSample | null; count: CounterSample | null };

/** A histogram's series so far (prom-client's histograms, which no scrape resets), summed over `urls`. */
async function histogramNow(urls: readonly string[], name: string, label: string): Promise<HistogramSums> {
  return { sum: await scrapeCounter(urls, `${name}_sum`, label), count: await scrapeCounter(urls, `${name}_count`, label) };
}

/** What a histogram observed between two scrapes, by label: how many and their total ms. */
function histogramBetween(before: HistogramSums | undefined, after: HistogramSums): Record<string, { count: number; totalMs: number }> {
  const sum = counterDelta(before?.sum ?? null, after.sum);
  const count = counterDelta(before?.count ?? null, after.count);
  if (!sum || !count) return {};
  return Object.fromEntries([...sum].map(([label, seconds]) => [label, { count: count.get(label) ?? 0, totalMs: seconds * 1000 }]));
}

/** Each process's GC time and pauses so far, by kind. */
function gcPerUrl(urls: readonly string[]): Promise<HistogramSums[]> {
  return Promise.all(urls.map((url) => histogramNow([url], GC_SECONDS, 'kind')));
}

const STORE_COMMAND_LABELS = ['command', 'collection'] as const;
/** The worker's batch-end steps (the API has none), by step. */
const END_STEPS = 'x402_batch_end_step_seconds';

/** The batch ends of the level, by step: how many ran and their mean milliseconds. */
function endStepsBetween(before: HistogramSums, after: HistogramSums): Record<string, { count: number; meanMs: number }> {
  return Object.fromEntries(Object.entries(histogramBetween(before, after)).map(([step, h]) => [step, { count: h.count, meanMs: h.totalMs / Math.max(1, h.count) }]));
}

export async function runLevel(s: LevelSettings, label: string, rate: number, seconds: number): Promise<LevelFigures> {
  const { w } = s;
  const arrivals = planArrivals(rate, seconds, s.arrivals);
  const batch = await prepareVouchers(s.vouchers, arrivals.length);

  const metricsBefore = await scrapeCounter(s.metricsUrls, 'x402_store_commands_total', STORE_COMMAND_LABELS);
  const gcBefore = await gcPerUrl(s.metricsUrls);
  const endStepsBefore = await histogramNow(s.metricsUrls, END_STEPS, 'step');
  const runsBefore = await settlementRunsNow(w.temporal).catch(() => null);
  const fromBlock = await w.publicClient.getBlockNumber();
  const since = new Date();
  const cpuBefore = snapshot(s.processes);
  const clientBefore = process.cpuUsage();

  const run: OpenLoopResult = await runOpenLoop({
    baseUrl: s.stack.urls.baseUrl,
    rate,
    seconds,
    vouchers: batch.vouchers,
    arrivals,
    pollEveryMs: s.pollEveryMs,
    ...(s.longPollSeconds ? { longPollSeconds: s.longPollSeconds, longPollShare: s.longPollShare ?? 0.5 } : {}),
    maxInFlight: s.maxInFlight,
    drainSeconds: s.drainSeconds,
  });

  const cpu = cpuBetween(cpuBefore, snapshot(s.processes));
  const client = process.cpuUsage(clientBefore);
  cpu.set('bench client', (client.user + client.system) / 1e6);
  const toBlock = await w.publicClient.getBlockNumber();
  // Read before the store-command scrape below, which would reset the event-loop monitors.
  const lags = await scrapeGaugesPerUrl(s.metricsUrls, [LAG_P99, LAG_MAX]);
  const gcAfter = await gcPerUrl(s.metricsUrls);
  const endStepsAfter = await histogramNow(s.metricsUrls, END_STEPS, 'step');
  const metricsAfter = await scrapeCounter(s.metricsUrls, 'x402_store_commands_total', STORE_COMMAND_LABELS);
  const records = run.records;
  const accepted = records.filter((r) => r.outcome === 'accepted');
  const docs = await storeDocs(w, accepted);
  const open = docs.filter((d) => d.status !== 'CONFIRMED' && d.status !== 'FAILED');
  const storeBacklogByStatus: Record<string, number> = {};
  for (const d of open) storeBacklogByStatus[d.status] = (storeBacklogByStatus[d.status] ?? 0) + 1;
  const storeConfirmed = docs.length - open.length;
  const confirmed = accepted.filter((r) => r.terminal === 'CONFIRMED');
  const settled = confirmed.length;
  const windowS = seconds;

  const histories = await readShardHistories(w.temporal, since, new Date()).catch(() => null);
  const shardRounds = histories?.rounds ?? null;
  const settlementEvents = runsBefore ? await settlementEventsSince(w.temporal, runsBefore, since).catch(() => null) : null;
  const history = await paymentHistoryEvents(w.temporal, [...confirmed, ...accepted.filter((r) => r.terminal !== 'CONFIRMED')].map((r) => r.paymentId as string), s.historySample);
  const batches = await productBatches(w, fromBlock + 1n, toBlock);
  const storeConfirm = summarize(storeConfirmations(docs, accepted));
  const commands = counterDelta(metricsBefore, metricsAfter);

  const errors: Record<string, number> = {};
  for (const r of records) {
    if (r.outcome !== 'error') continue;
    const k = `${r.status ?? ''} ${r.code ?? ''}`.trim();
    errors[k] = (errors[k] ?? 0) + 1;
  }
  const count = (o: CaptureRecord['outcome']) => records.filter((r) => r.outcome === o).length;
  const sent = records.filter((r) => r.sentMs !== undefined);
  const capture = summarize(sent.map((r) => r.latencyMs ?? run.endMs - (r.sentMs as number)));
  // With merchants of two kinds, CONFIRMED is what the long-polling ones saw (as the SDK waits).
  const longPolled = confirmed.filter((r) => r.longPoll);
  const confirm = summarize((longPolled.length > 0 ? longPolled : confirmed).map((r) => r.confirmSeconds as number));
  const polls = summarize(run.pollLatenciesMs);
  const cpuMsPerSettled = Object.fromEntries([...cpu].map(([name, sec]) => [name, per(sec * 1000, settled)]));
  const stackCpu = [...cpu].filter(([name]) => name !== 'bench client').reduce((a, [, sec]) => a + sec, 0);
  const settlementShare = settlementEvents ? per(settlementEvents.events, settled) : Number.NaN;
  const shedUnavailable = count('shed_unavailable');
  const shedRateLimited = count('shed_rate_limited');

  const startedAtMs = since.getTime();
  const batchesSettled = await settledBatches(w, docs, histories?.confirmedAtMs ?? new Map());
  const lagMs = Number.isFinite(confirm.p50) ? confirm.p50 * 1000 : 0;
  const steadyTo = Math.min(run.windowMs + lagMs, run.endMs);
  const steady = confirmed.filter((r) => (r.terminalSeenMs as number) >= lagMs && (r.terminalSeenMs as number) < steadyTo).length;

  const released = await releaseUnused(
    w,
    batch.vouchers.filter((_, i) => {
      const o = (records[i] as CaptureRecord).outcome;
      return o !== 'accepted' && o !== 'unanswered';
    }),
  );

  return {
    label,
    offeredRate: rate,
    windowSeconds: windowS,
    drainSeconds: Math.max(0, (run.endMs - run.windowMs) / 1000),
    vouchers: { counts: batch.counts, perSecond: batch.perSecond, seconds: batch.seconds },
    offered: records.length,
    offeredPerSec: records.length / windowS,
    sent: sent.length,
    notSent: count('not_sent'),
    accepted: accepted.length,
    acceptedPerSec: accepted.length / windowS,
    shedUnavailable,
    shedRateLimited,
    shedPerSec: (shedUnavailable + shedRateLimited) / windowS,
    shedUnavailablePerSec: shedUnavailable / windowS,
    shedRateLimitedPerSec: shedRateLimited / windowS,
    errors,
    errorCount: count('error'),
    unanswered: count('unanswered'),
    settled,
    failed: accepted.filter((r) => r.terminal === 'FAILED').length,
    settledPerSec: settled / windowS,
    sustainedSettledPerSec: per(steady, (steadyTo - lagMs) / 1000),
    pacedSettledPerSec: batchPacePerSec(batchesSettled) ?? Number.NaN,
    pacedByBlockTimePerSec: batchPacePerSec(batchesSettled.map((b) => ({ ...b, confirmedAtMs: b.blockTimeMs }))) ?? Number.NaN,
    settledBatches: batchesSettled.map((b) => [b.shard, b.confirmedAtMs - startedAtMs, b.payments]),
    storeConfirmedPerSec: storeConfirmed / (run.endMs / 1000),
    captureMs: { p50: capture.p50, p99: capture.p99, max: capture.max },
    captureMaxMsBySecond: maxBySecond(sent, windowS, run.endMs),
    sendLagP99Ms: summarize(run.sendLagMs).p99,
    confirmS: { p50: confirm.p50, p99: confirm.p99, max: confirm.max },
    storeConfirmS: { p50: storeConfirm.p50, p99: storeConfirm.p99 },
    pollMs: { p50: polls.p50, p99: polls.p99 },
    polls: run.pollLatenciesMs.length,
    pollFailures: run.pollFailures,
    backlog: accepted.length - settled - accepted.filter((r) => r.terminal === 'FAILED').length,
    storeBacklog: open.length,
    storeBacklogByStatus,
    openPaymentIds: open.map((d) => d._id),
    cpuMsPerSettled,
    cpuMsPerSettledTotal: per(stackCpu * 1000, settled),
    temporal: {
      paymentEvents: history.mean,
      sampled: history.sampled,
      settlementEvents: settlementEvents?.events ?? Number.NaN,
      settlementRuns: settlementEvents?.runs ?? 0,
      perPayment: history.mean + settlementShare,
    },
    storeCommands: commands ? Object.fromEntries(commands) : null,
    storeCommandsPerPayment: commands ? per(total(commands), settled) : null,
    eventLoopDelayMs: lags.map((l) => ({ p99: msOf(l.get(LAG_P99)), max: msOf(l.get(LAG_MAX)) })),
    gc: gcAfter.map((after, i) => histogramBetween(gcBefore[i], after)),
    gas: { batches: batches.batches, payments: batches.payments, gasPerPayment: batches.gasPerPayment, sizes: batches.sizes },
    phases: phaseProfile(accepted.map((r) => r.serverTiming ?? {})),
    queueMs: queueWaits(records),
    releasedHolds: released.released,
    refusedButConsumed: released.consumed,
    shardRounds,
    batchEndSteps: endStepsBetween(endStepsBefore, endStepsAfter),
  };
}

function maxBySecond(sent: readonly CaptureRecord[], seconds: number, endMs: number): number[] {
  const out = Array.from({ length: Math.ceil(seconds) }, () => 0);
  for (const r of sent) {
    const i = Math.min(out.length - 1, Math.floor((r.sentMs as number) / 1000));
    out[i] = Math.max(out[i] as number, Math.round(r.latencyMs ?? endMs - (r.sentMs as number)));
  }
  return out;
}

function queueWaits(records: readonly CaptureRecord[]): LevelFigures['queueMs'] {
  const timed = records.filter((r) => r.serverTiming?.queue_accept !== undefined).map((r) => r.serverTiming as Record<string, number>);
  const accept = summarize(timed.map((t) => t.queue_accept as number));
  return { acceptP99: accept.p99, acceptMax: accept.max, readP99: summarize(timed.map((t) => t.queue_read ?? 0)).p99 };
}

/** One line for the console while the bench runs. */
export function describeLevel(f: LevelFigures): string {
  const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
  const shed = f.shedPerSec > 0 ? `, shed ${f1(f.shedUnavailablePerSec)} 503/s + ${f1(f.shedRateLimitedPerSec)} 429/s` : '';
  const errs = f.errorCount > 0 ? `, ${f.errorCount} errors ${JSON.stringify(f.errors)}` : '';
  return (
    `${f.label}: offered ${f1(f.offeredPerSec)}/s, accepted ${f1(f.acceptedPerSec)}/s${shed}${errs}, settled ${f1(f.settledPerSec)}/s (sustained ${f1(f.sustainedSettledPerSec)}/s, paced ${f1(f.pacedSettledPerSec)}/s, store ${f1(f.storeConfirmedPerSec)}/s); ` +
    `capture p50 ${f1(f.captureMs.p50)} p99 ${f1(f.captureMs.p99)} max ${f1(f.captureMs.max)} ms; -> CONFIRMED p50 ${f1(f.confirmS.p50)} p99 ${f1(f.confirmS.p99)} s; ` +
    `poll p99 ${f1(f.pollMs.p99)} ms; backlog ${f.backlog} (store ${f.storeBacklog} ${JSON.stringify(f.storeBacklogByStatus)})${f.refusedButConsumed ? `, ${f.refusedButConsumed} refused captures consumed their intent anyway` : ''}${f.unanswered ? `, ${f.unanswered} unanswered` : ''}${f.notSent ? `, ${f.notSent} not sent (client cap)` : ''}; ` +
    `CPU ${f1(f.cpuMsPerSettledTotal)} ms/settled; Temporal ${f1(f.temporal.perPayment)} events/payment; store ${f.storeCommandsPerPayment === null ? 'n/a' : f1(f.storeCommandsPerPayment)} commands/payment; ` +
    `vouchers ${JSON.stringify(f.vouchers.counts)} in ${f1(f.vouchers.seconds)} s`
  );
}
