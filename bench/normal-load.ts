/**
 * Normal load, measured against the floor of the same run: two open-loop levels at a share of the
 * peak's steady settled/s (half and 80 %), and the bars the peak and those levels are held against. The
 * peak is compared with the bare-worker ceiling (delayed start -> signal-with-start -> complete),
 * so the bars hold on any machine.
 */
import type { LevelFigures } from './level.js';
import type { Bar } from './summary.js';

/** Each normal level's offered rate as a share of the peak's steady settled/s. */
export const NORMAL_LOAD = { half: 0.5, eighty: 0.8 } as const;
export type NormalLoadKey = keyof typeof NORMAL_LOAD;

/** What BENCH_OUT carries for each normal level. */
export interface NormalLoadFigures {
  offeredPerSec: number;
  acceptedPerSec: number;
  /** 503 answers / offered captures. */
  shedFraction: number;
  captureP99Ms: number;
  pollP99Ms: number;
  /** Capture 200 -> a merchant poll saw CONFIRMED, median (issue 45: about a second at low load under group commit). */
  confirmP50Ms: number;
  confirmP99Ms: number;
  /** Offered/s (as sent, not as scheduled) over the peak's steady settled/s. */
  ofPeakSustained: number;
}

export const FLOOR_BARS = {
  peakToCeiling: 0.75,
  half: { shedFraction: 0, captureP99Ms: 250, pollP99Ms: 100 },
  eighty: { shedFraction: 0.01, captureP99Ms: 400 },
} as const;

/** Offered captures/s of each normal level, to 0.1/s; null when there is no peak to take a share of. */
export function normalLoadRates(peakSettledPerSec: number): Record<NormalLoadKey, number> | null {
  if (!Number.isFinite(peakSettledPerSec) || peakSettledPerSec <= 0) return null;
  const rate = (share: number) => Math.max(0.1, Math.round(share * peakSettledPerSec * 10) / 10);
  return { half: rate(NORMAL_LOAD.half), eighty: rate(NORMAL_LOAD.eighty) };
}

type ShedInput = Pick<LevelFigures, 'offered' | 'shedUnavailable' | 'errors'>;

/** Every 503 over the offered captures: the shed UNAVAILABLE ones and any other 503 the errors list by `status code`. */
export function shedFraction(l: ShedInput): number {
  const other503 = Object.entries(l.errors)
    .filter(([k]) => /^503\b/.test(k))
    .reduce((a, [, n]) => a + n, 0);
  return l.offered > 0 ? (l.shedUnavailable + other503) / l.offered : Number.NaN;
}

export function normalLoadFigures(l: ShedInput & Pick<LevelFigures, 'offeredPerSec' | 'acceptedPerSec' | 'captureMs' | 'pollMs' | 'confirmS'>, peakSustainedPerSec: number): NormalLoadFigures {
  return {
    offeredPerSec: l.offeredPerSec,
    acceptedPerSec: l.acceptedPerSec,
    shedFraction: shedFraction(l),
    captureP99Ms: l.captureMs.p99,
    pollP99Ms: l.pollMs.p99,
    confirmP50Ms: l.confirmS.p50 * 1000,
    confirmP99Ms: l.confirmS.p99 * 1000,
    ofPeakSustained: peakSustainedPerSec > 0 ? l.offeredPerSec / peakSustainedPerSec : Number.NaN,
  };
}

/** The peak's settled/s over the bare-worker ceiling of the same run. */
export const peakToCeiling = (peakSettledPerSec: number, delayedCeilingPerSec: number) => (delayedCeilingPerSec > 0 ? peakSettledPerSec / delayedCeilingPerSec : Number.NaN);

const ok = (x: number | null, test: (v: number) => boolean) => x !== null && Number.isFinite(x) && test(x);
const pct = (fraction: number | null) => (fraction === null ? null : fraction * 100);

type NormalLevel = { label: string; figures: NormalLoadFigures } | null;

/** The level's label (its rate and share), or the share alone when it did not run. */
const levelName = (key: NormalLoadKey, level: NormalLevel) => level?.label ?? `${NORMAL_LOAD[key]}x peak (not run)`;

function shedBar(key: NormalLoadKey, level: NormalLevel, atMost: number): Bar {
  const v = level?.figures.shedFraction ?? null;
  return {
    metric: `${levelName(key, level)}: captures answered 503`,
    measured: pct(v),
    unit: '%',
    detail: level ? `of ${level.figures.offeredPerSec.toFixed(1)} /s offered, ${level.figures.ofPeakSustained.toFixed(2)}x the peak's steady settled/s` : undefined,
    bar: atMost === 0 ? '== 0 %' : `<= ${atMost * 100} %`,
    meets: ok(v, (x) => x <= atMost),
    baseline: '',
  };
}

function msBar(name: string, what: string, v: number | null, atMost: number): Bar {
  return { metric: `${name}: ${what}`, measured: v, unit: 'ms', bar: `<= ${atMost} ms`, meets: ok(v, (x) => x <= atMost), baseline: '' };
}

/** The bars of the Temporal floor: the ratio to the ceiling and latency/shedding at normal load. Reported, never failed. */
export function floorBars(o: { peakSettledPerSec: number; delayedCeilingPerSec: number; half: NormalLevel; eighty: NormalLevel }): Bar[] {
  const ratio = peakToCeiling(o.peakSettledPerSec, o.delayedCeilingPerSec);
  const half = o.half?.figures ?? null;
  const eighty = o.eighty?.figures ?? null;
  return [
    {
      metric: 'peak settled/s / Temporal delayed start -> signal-with-start -> complete ceiling',
      measured: ratio,
      unit: 'x',
      detail: `${o.peakSettledPerSec.toFixed(1)} /s of ${o.delayedCeilingPerSec.toFixed(1)} /s`,
      bar: `>= ${FLOOR_BARS.peakToCeiling}`,
      meets: ok(ratio, (x) => x >= FLOOR_BARS.peakToCeiling),
      baseline: '',
    },
    shedBar('half', o.half, FLOOR_BARS.half.shedFraction),
    msBar(levelName('half', o.half), 'capture p99', half?.captureP99Ms ?? null, FLOOR_BARS.half.captureP99Ms),
    msBar(levelName('half', o.half), 'poll p99', half?.pollP99Ms ?? null, FLOOR_BARS.half.pollP99Ms),
    shedBar('eighty', o.eighty, FLOOR_BARS.eighty.shedFraction),
    msBar(levelName('eighty', o.eighty), 'capture p99', eighty?.captureP99Ms ?? null, FLOOR_BARS.eighty.captureP99Ms),
  ];
}
