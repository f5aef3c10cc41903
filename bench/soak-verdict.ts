/**
 * The soak's judgement, pure: does throughput drift down, does any process's memory or handle
 * count keep growing? Samples from the first quarter (warm-up: JIT, caches, pools) are left out;
 * the second quarter is the baseline the last quarter is compared with.
 */
import { mean, median } from './stats.js';

export interface SoakSample {
  /** Seconds since the load started. */
  t: number;
  /** Payments seen CONFIRMED per second since the previous sample. */
  settledPerSec: number;
  /** Per process name. */
  rssMb: Record<string, number>;
  fds: Record<string, number>;
  heapMb: Record<string, number>;
}

export interface GrowthLimit {
  /** Relative growth allowed, last quarter's median against the second quarter's (0.3 = +30 %). */
  relative: number;
  /** Absolute growth below which nothing is flagged (noise in small numbers). */
  absolute: number;
}

export const LIMITS = {
  throughputDrift: -0.1,
  rssMb: { relative: 0.3, absolute: 64 },
  heapMb: { relative: 0.3, absolute: 32 },
  fds: { relative: 0.5, absolute: 64 },
} as const;

export interface Growth {
  metric: string;
  process: string;
  baseline: number;
  last: number;
  growth: number;
  ok: boolean;
}

export interface SoakVerdict {
  ok: boolean;
  /** Last quarter's mean settled/s against the second quarter's, minus one. */
  throughputDrift: number;
  baselineSettledPerSec: number;
  lastSettledPerSec: number;
  growth: Growth[];
  problems: string[];
}

export { median };

/** The samples of quarter q (0..3) of the run by time. */
export function quarter(samples: readonly SoakSample[], q: number): SoakSample[] {
  const end = samples.at(-1)?.t ?? 0;
  return samples.filter((s) => s.t >= (end * q) / 4 && (q === 3 ? s.t <= end : s.t < (end * (q + 1)) / 4));
}

function growthOf(metric: 'rssMb' | 'heapMb' | 'fds', base: readonly SoakSample[], last: readonly SoakSample[], limit: GrowthLimit): Growth[] {
  const names = new Set(last.flatMap((s) => Object.keys(s[metric])));
  return [...names].map((name) => {
    const b = median(base.map((s) => s[metric][name]).filter((v): v is number => Number.isFinite(v)));
    const l = median(last.map((s) => s[metric][name]).filter((v): v is number => Number.isFinite(v)));
    const growth = b > 0 ? l / b - 1 : 0;
    const ok = !(Number.isFinite(b) && Number.isFinite(l)) || growth <= limit.relative || l - b <= limit.absolute;
    return { metric, process: name, baseline: b, last: l, growth, ok };
  });
}

/** Runs shorter than this are mostly cache warm-up (Temporal's RSS rose 21 % in a 3-minute run): memory is reported, not judged. */
export const MIN_MINUTES_TO_JUDGE_MEMORY = 10;

/**
 * Processes whose growth is reported, not judged: anvil keeps every block and transaction of its
 * chain in memory, so a dev chain grows with the load by design (a real chain is not ours to run).
 */
export const NOT_JUDGED = ['anvil'];

const judgeMemoryFor = (samples: readonly SoakSample[]) => (samples.at(-1)?.t ?? 0) >= MIN_MINUTES_TO_JUDGE_MEMORY * 60;

export function judgeSoak(samples: readonly SoakSample[]): SoakVerdict {
  const base = quarter(samples, 1);
  const last = quarter(samples, 3);
  const baselineSettledPerSec = mean(base.map((s) => s.settledPerSec));
  const lastSettledPerSec = mean(last.map((s) => s.settledPerSec));
  const throughputDrift = baselineSettledPerSec > 0 ? lastSettledPerSec / baselineSettledPerSec - 1 : Number.NaN;
  const growth = [...growthOf('rssMb', base, last, LIMITS.rssMb), ...growthOf('heapMb', base, last, LIMITS.heapMb), ...growthOf('fds', base, last, LIMITS.fds)];
  const problems: string[] = [];
  if (base.length < 2 || last.length < 2) problems.push(`too few samples to judge (${samples.length})`);
  // A short run's quarters hold a handful of samples, whose noise alone reaches 10 %: twice the margin.
  const driftLimit = judgeMemoryFor(samples) ? LIMITS.throughputDrift : 2 * LIMITS.throughputDrift;
  if (!(throughputDrift >= driftLimit)) {
    problems.push(`throughput drifted ${(throughputDrift * 100).toFixed(1)} % (${baselineSettledPerSec.toFixed(2)} -> ${lastSettledPerSec.toFixed(2)} settled/s)`);
  }
  const judgeMemory = judgeMemoryFor(samples);
  for (const g of growth) if (!judgeMemory || NOT_JUDGED.includes(g.process)) g.ok = true;
  for (const g of growth.filter((x) => !x.ok)) problems.push(`${g.process} ${g.metric} grew ${(g.growth * 100).toFixed(0)} % (${g.baseline.toFixed(0)} -> ${g.last.toFixed(0)})`);
  return { ok: problems.length === 0, throughputDrift, baselineSettledPerSec, lastSettledPerSec, growth, problems };
}
