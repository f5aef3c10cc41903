/** docs/benchmarks.md from one run. */
import { describeMachine, type MachineInfo } from './machine.js';
import { blockMarkdown, type Block } from './sections.js';

export interface RunSettings {
  quick: boolean;
  rates: number[];
  seconds: number;
  /** Window of each normal-load level (0.5x and 0.8x the peak's settled/s). */
  normalSeconds: number;
  drainSeconds: number;
  merchants: number;
  borrowers: number;
  arrivals: string;
  pollEveryMs: number;
  /** >0: the normal-load levels long-poll (`Prefer: wait=N`) as the SDK does. */
  normalLongPollSeconds: number;
  maxInFlight: number;
  mcpVouchersPerLevel: number;
  preload: number;
  batchMaxPayments: number;
  batchWindowMs: number;
  /** BATCH_MIN_PAYMENTS: 1 is group commit. */
  batchMinPayments?: number;
  /** ANVIL_BLOCK_TIME_SECONDS: 0 mines one block per transaction. */
  blockTimeSeconds?: number;
  confirmations: number;
  stackStartSeconds: number;
  onboardingSeconds: number;
  totalSeconds: number;
}

export function benchmarksPage(machine: MachineInfo, s: RunSettings, blocks: Block[], notes: string[], chartFile: string): string {
  return [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (bench/run.ts) from one run; rerun it to refresh this page (`BENCH_QUICK=1` for the short run).',
    'The bench starts a stack of its own (Temporal dev server, FerretDB on SQLite, anvil, one worker, one API process) on free',
    `ports, onboards ${s.borrowers} borrowers through the real agent flow, gives ${s.merchants} merchants raised per-merchant rate limits, then offers`,
    'captures **open loop**: each capture leaves at its scheduled time whatever the earlier answers, and every accepted payment is',
    'polled by its merchant once a second (`GET /facilitator/payments/{id}`) until CONFIRMED or FAILED, up to the end of the',
    "level's drain. Vouchers are prepared before each level (not timed): a few through the real `prepare_x402_payment`, the rest",
    "through the product's createSpendIntent (or, when that is too slow for the run, bulk holds and insertMany in the same document",
    'shape), each signed with the borrower\'s agent key.',
    '',
    `- Machine: ${describeMachine(machine)}`,
    `- Date: ${machine.date}`,
    `- Stack: batch ${s.batchMaxPayments} payments or ${s.batchWindowMs} ms${s.batchMinPayments === undefined ? '' : s.batchMinPayments <= 1 ? ', group commit (BATCH_MIN_PAYMENTS 1: a shard sends as soon as it is free)' : `, due at ${s.batchMinPayments} ready`}, ${s.confirmations} confirmation(s)${s.blockTimeSeconds ? `, a block every ${s.blockTimeSeconds} s` : ', a block per transaction'}; the load generator runs on the same cores.`,
    `- Load: ${s.quick ? 'quick mode, ' : ''}levels ${s.rates.join(', ')} captures/s offered, ${s.seconds} s each plus up to ${s.drainSeconds} s of drain, then 0.5x and 0.8x the peak's settled/s, ${s.normalSeconds} s each; ${s.arrivals} arrivals;` +
      ` at most ${s.maxInFlight} requests in flight; merchants poll every ${s.pollEveryMs} ms${s.normalLongPollSeconds > 0 ? ` in the sweep; in the normal-load levels every other merchant long-polls instead (\`Prefer: wait=${s.normalLongPollSeconds}\`, as the SDK's waitForSettlement does) and their CONFIRMED is the level's` : ''}; ${s.mcpVouchersPerLevel} vouchers per level through prepare_x402_payment.`,
    `- Run: stack start ${s.stackStartSeconds.toFixed(0)} s, onboarding ${s.onboardingSeconds.toFixed(0)} s, whole run ${s.totalSeconds.toFixed(0)} s.`,
    ...(Number(machine.loadAverage.split(' ')[0]) > 1
      ? [`- Caveat: the machine was not idle at the start (load average ${machine.loadAverage}); other processes shared the cores with the stack, so latencies and CPU figures are inflated.`]
      : []),
    '',
    `![settled/s and capture p99 against offered rate](${chartFile})`,
    '',
    ...blocks.map(blockMarkdown),
    '### How to read this',
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
}
