import assert from 'node:assert/strict';
import type { LevelFigures } from '../../bench/level.js';
import { bars, peakLevel, saturationLevel, summarizeBench, steadySettledRate } from '../../bench/summary.js';

// Only the fields the summary reads; the rest of a level's figures do not enter it.
const level = (label: string, offeredRate: number, settledPerSec: number, sustainedSettledPerSec: number, pacedSettledPerSec = Number.NaN, storeConfirmedPerSec = 0, shedShare = 0) =>
  ({
    storeConfirmedPerSec,
    offered: offeredRate * 15,
    shedUnavailable: Math.round(offeredRate * 15 * shedShare),
    label,
    offeredRate,
    offeredPerSec: offeredRate,
    settledPerSec,
    sustainedSettledPerSec,
    pacedSettledPerSec,
    captureMs: { p50: 20, p99: 200, max: 400 },
    confirmS: { p50: 4, p99: 8, max: 9 },
    pollMs: { p50: 3, p99: 50 },
    cpuMsPerSettledTotal: 30,
    temporal: { perPayment: 7 },
    storeCommandsPerPayment: 6.5,
  }) as unknown as LevelFigures;

describe('bench summary', () => {
  // An overloaded level is credited with its drain's settlements by the drain-based figure: here
  // 100/s "settles" 60/s over its window while it sustained 40/s; 50/s kept pace at 46/s.
  const sweep = [level('25/s', 25, 25, 24), level('50/s', 50, 50, 46), level('100/s', 100, 60, 40)];

  it('takes the peak at the most steady settled/s, not the most settled by the end of the drain', () => {
    assert.equal(peakLevel(sweep).label, '50/s');
  });

  it("takes a level's batch pace where it has one, else its sustained rate, and neither above the drain-based figure", () => {
    assert.equal(steadySettledRate(level('100/s', 100, 60, 30, 44)), 44);
    assert.equal(steadySettledRate(level('100/s', 100, 60, 30)), 30);
    assert.equal(steadySettledRate(level('25/s', 25, 24.5, 30, 26)), 24.5);
    assert.equal(peakLevel([level('50/s', 50, 50, 52, 47), level('100/s', 100, 63, 41, 49)]).label, '100/s');
  });

  it("never below the level's own payments confirmed over window + drain: the pipeline did at least that much", () => {
    assert.equal(steadySettledRate(level('100/s', 100, 41.7, 40.1, 25.8, 29.6)), 29.6);
    assert.equal(steadySettledRate(level('25/s', 25, 20, 30, 26, 21)), 20, 'nor above the drain-based figure');
  });

  it('never takes a sustained rate above the drain-based one (a window that caught one batch more than its share)', () => {
    assert.equal(peakLevel([level('25/s', 25, 23, 37), level('50/s', 50, 50, 30)]).label, '50/s');
    assert.equal(steadySettledRate(level('25/s', 25, 23, 37)), 23);
  });

  it('reports the peak, the 4x level and data growth by their sustained rates, the drain-based figures beside them', () => {
    const overload = level('200/s (4x peak)', 200, 70, 42);
    const s = summarizeBench(sweep, overload, true, { level: level('50/s +1k stored', 50, 49, 41.4), preload: { storedPayments: 1000, seconds: 5, note: 'n', paymentsPerSecond: 200 } as never, half: null, quarter: null }, 5000);
    assert.equal(s.peakSettledPerSec, 46);
    assert.equal(s.peakSettledByDrainPerSec, 50);
    assert.deepEqual([s.overload.settledPerSec, s.overload.settledByDrainPerSec], [42, 70]);
    assert.equal(s.dataGrowth.settledPerSecRatio, 41.4 / 46);
    const overloadBar = bars(s).find((b) => b.metric.startsWith('steady settled/s at 4x the saturation rate'));
    assert.equal(overloadBar?.meets, 42 >= 0.9 * 46);
    assert.match(overloadBar?.detail ?? '', /70\.0 \/s counting its drain/);
  });

  describe('the saturation rate (4x and data growth run at multiples of it)', () => {
    // Past capacity the levels settle alike within noise; the best of them can land on 400/s.
    const past = [
      level('25/s', 25, 25, 24, 24, 24),
      level('50/s', 50, 48, 40, 40, 38, 0.06),
      level('100/s', 100, 60, 41, 41, 40, 0.45),
      level('200/s', 200, 55, 39, 39, 38, 0.75),
      level('400/s', 400, 57, 44, 44, 42, 0.88),
    ];

    it('is the lowest level from which every level up shed at least a fifth of its captures, when the best lies above it', () => {
      assert.equal(peakLevel(past).label, '400/s');
      assert.equal(saturationLevel(past).label, '100/s');
    });

    it('is the peak level when the peak lies lower, or when no run of levels shed', () => {
      assert.equal(saturationLevel(sweep).label, '50/s');
      const [l25, l50, l100, l200, l400] = past as [LevelFigures, LevelFigures, LevelFigures, LevelFigures, LevelFigures];
      assert.equal(saturationLevel([l25, l50, l100, level('200/s', 200, 55, 39, 39, 38, 0.1), l400]).label, '400/s', 'a level between that shed little breaks the run');
      assert.equal(saturationLevel([l25, level('50/s', 50, 50, 47, 47, 45, 0.3), l100, l200]).label, '50/s');
    });

    it('sets the growth comparison: the re-run against the sweep level at the same offered rate', () => {
      const s = summarizeBench(past, level('400/s', 400, 57, 44, 44, 42, 0.88), false, { level: level('100/s +100k stored', 100, 58, 37, 37, 36, 0.5), preload: { storedPayments: 100_000, seconds: 40, note: 'n', paymentsPerSecond: 2500 } as never, half: null, quarter: null }, 5000);
      assert.deepEqual(s.saturation, { label: '100/s', offeredPerSec: 100 });
      assert.equal(s.peakSettledPerSec, 44);
      assert.equal(s.dataGrowth.settledPerSecRatio, 37 / 41);
    });
  });

  it("judges the capture median of data growth at the quarter level, against its re-run just before the preload, and keeps the half level's, the sweep's and the saturation rate's beside it", () => {
    const at = (label: string, rate: number, p50: number) => ({ ...level(label, rate, rate, rate, rate, rate), captureMs: { p50, p99: 200, max: 400 } }) as LevelFigures;
    const preload = { storedPayments: 100_000, seconds: 40, note: 'n', paymentsPerSecond: 2500 } as never;
    const half = { level: at('21/s +100k stored', 21, 27), empty: at('21/s before the preload', 21, 15), sweep: at('21/s', 21, 12) };
    const quarter = { level: at('10.5/s +100k stored', 10.5, 11), empty: at('10.5/s before the preload', 10.5, 10) };
    const s = summarizeBench([at('25/s', 25, 40), at('50/s', 50, 300)], at('200/s', 200, 100), true, { level: at('50/s +100k stored', 50, 800), preload, half, quarter }, 5000);
    assert.equal(s.dataGrowth.captureP50Ratio, 11 / 10);
    assert.equal(s.dataGrowth.captureP50OfferedPerSec, 10.5);
    assert.equal(s.dataGrowth.captureP50PeakShare, 0.25);
    assert.equal(s.dataGrowth.captureP50RatioAtHalf, 27 / 15);
    assert.equal(s.dataGrowth.captureP50RatioToSweep, 27 / 12);
    assert.equal(s.dataGrowth.captureP50RatioAtSaturation, 800 / 300);
    const bar = bars(s).find((b) => b.metric.startsWith('data growth: capture p50'));
    assert.match(bar?.metric ?? '', /at 10\.5\/s, 0\.25x peak/);
    assert.equal(bar?.meets, true, 'the quarter level decides, not the half level beside it');
    assert.match(bar?.detail ?? '', /1\.80 x at 0\.5x peak; 2\.67 x at the saturation rate/);

    const loadedQuarter = summarizeBench([at('25/s', 25, 40), at('50/s', 50, 300)], at('200/s', 200, 100), true, { level: at('50/s +100k stored', 50, 800), preload, half, quarter: { ...quarter, level: at('10.5/s +100k stored', 10.5, 12.5) } }, 5000);
    assert.equal(bars(loadedQuarter).find((b) => b.metric.startsWith('data growth: capture p50'))?.meets, false, 'a quarter level 1.25x slower with the data stored misses');
  });

  it('falls back to the half level when the quarter level did not run', () => {
    const at = (label: string, rate: number, p50: number) => ({ ...level(label, rate, rate, rate, rate, rate), captureMs: { p50, p99: 200, max: 400 } }) as LevelFigures;
    const preload = { storedPayments: 100_000, seconds: 40, note: 'n', paymentsPerSecond: 2500 } as never;
    const s = summarizeBench([at('25/s', 25, 40), at('50/s', 50, 300)], at('200/s', 200, 100), true, { level: at('50/s +100k stored', 50, 800), preload, half: { level: at('21/s +100k stored', 21, 18), empty: at('21/s before the preload', 21, 15), sweep: at('21/s', 21, 12) }, quarter: null }, 5000);
    assert.equal(s.dataGrowth.captureP50Ratio, 18 / 15);
    assert.equal(s.dataGrowth.captureP50PeakShare, 0.5);
    const bar = bars(s).find((b) => b.metric.startsWith('data growth: capture p50'));
    assert.match(bar?.metric ?? '', /at 21\.0\/s, 0\.5x peak/);
    assert.match(bar?.detail ?? '', /^2\.67 x at the saturation rate/);
  });
});
