import assert from 'node:assert/strict';
import { floorBars, normalLoadFigures, normalLoadRates, peakToCeiling, shedFraction, type NormalLoadFigures } from '../../bench/normal-load.js';

const level = (o: { offered?: number; shedUnavailable?: number; errors?: Record<string, number> } = {}) => ({
  offered: o.offered ?? 300,
  offeredPerSec: 30,
  acceptedPerSec: 29.4,
  shedUnavailable: o.shedUnavailable ?? 0,
  errors: o.errors ?? {},
  captureMs: { p50: 20, p99: 180.5, max: 300 },
  pollMs: { p50: 3, p99: 42 },
  confirmS: { p50: 3.1, p99: 6.02, max: 7 },
});

const healthy: NormalLoadFigures = { offeredPerSec: 32, acceptedPerSec: 32, shedFraction: 0, captureP99Ms: 250, pollP99Ms: 100, confirmP50Ms: 1000, confirmP99Ms: 6000, ofPeakSustained: 0.6 };
const verdicts = (bars: ReturnType<typeof floorBars>) => bars.map((b) => b.meets);

describe('bench normal load', () => {
  it('offers half and 80 % of the peak settled/s, to 0.1/s', () => {
    assert.deepEqual(normalLoadRates(64.3), { half: 32.2, eighty: 51.4 });
    assert.deepEqual(normalLoadRates(0.05), { half: 0.1, eighty: 0.1 });
  });

  it('skips the normal levels when there is no peak', () => {
    assert.equal(normalLoadRates(0), null);
    assert.equal(normalLoadRates(Number.NaN), null);
  });

  it('counts every 503 (shed UNAVAILABLE and any other 503) over the offered captures, not 429s or other errors', () => {
    assert.equal(shedFraction(level({ offered: 200, shedUnavailable: 3, errors: { '503 OVERLOADED': 1, '503': 1, '500 INTERNAL': 4, 'network: socket hang up': 2 } })), 5 / 200);
    assert.equal(shedFraction(level({ offered: 200, errors: { '5030 X': 1 } })), 0);
    assert.ok(Number.isNaN(shedFraction(level({ offered: 0 }))));
  });

  it('reports the six figures BENCH_OUT carries, confirm p99 in ms, and the offered rate over the peak level\'s steady settled/s', () => {
    assert.deepEqual(normalLoadFigures(level({ shedUnavailable: 3 }), 40), { offeredPerSec: 30, acceptedPerSec: 29.4, shedFraction: 0.01, captureP99Ms: 180.5, pollP99Ms: 42, confirmP50Ms: 3100, confirmP99Ms: 6020, ofPeakSustained: 0.75 });
    assert.ok(Number.isNaN(normalLoadFigures(level({}), 0).ofPeakSustained));
  });

  it('meets every bar at its edge: ratio 0.75, no 503 and p99s 250/100 ms at half, 1 % and 400 ms at 80 %', () => {
    const bars = floorBars({ peakSettledPerSec: 75, delayedCeilingPerSec: 100, half: { label: '37.5/s', figures: healthy }, eighty: { label: '60/s', figures: { ...healthy, shedFraction: 0.01, captureP99Ms: 400, pollP99Ms: 900 } } });
    assert.deepEqual(verdicts(bars), [true, true, true, true, true, true]);
    assert.equal(bars[0]?.measured, 0.75);
    assert.equal(bars[0]?.detail, '75.0 /s of 100.0 /s');
    assert.equal(bars[1]?.detail, "of 32.0 /s offered, 0.60x the peak's steady settled/s");
    assert.equal(bars[4]?.measured, 1);
  });

  it('misses each bar just past it', () => {
    const bars = floorBars({
      peakSettledPerSec: 74.9,
      delayedCeilingPerSec: 100,
      half: { label: 'h', figures: { ...healthy, shedFraction: 1 / 3000, captureP99Ms: 250.1, pollP99Ms: 100.1 } },
      eighty: { label: 'e', figures: { ...healthy, shedFraction: 0.0101, captureP99Ms: 400.1 } },
    });
    assert.deepEqual(verdicts(bars), [false, false, false, false, false, false]);
  });

  it('reports levels that did not run, and a missing ceiling, as not met', () => {
    const bars = floorBars({ peakSettledPerSec: 50, delayedCeilingPerSec: 0, half: null, eighty: null });
    assert.deepEqual(verdicts(bars), [false, false, false, false, false, false]);
    assert.ok(bars.slice(1).every((b) => b.measured === null));
    assert.equal(bars[4]?.metric, '0.8x peak (not run): captures answered 503');
    assert.ok(Number.isNaN(peakToCeiling(50, 0)));
  });
});
