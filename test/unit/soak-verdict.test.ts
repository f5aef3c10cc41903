import assert from 'node:assert/strict';
import { judgeSoak, median, quarter, type SoakSample } from '../../bench/soak-verdict.js';

/** n samples, one every `every` seconds (40 samples of 20 s: a 13-minute run). */
function run(n: number, f: (i: number) => Partial<SoakSample>, every = 20): SoakSample[] {
  return Array.from({ length: n }, (_, i) => ({ t: i * every, settledPerSec: 10, rssMb: { api: 100 }, fds: { api: 40 }, heapMb: { api: 30 }, ...f(i) }));
}

describe('soak verdict', () => {
  it('passes a steady run, warm-up growth in the first quarter included', () => {
    const v = judgeSoak(run(40, (i) => ({ rssMb: { api: i < 10 ? 50 + i * 5 : 100 + (i % 3) }, settledPerSec: 10 + (i % 2) })));
    assert.equal(v.ok, true, v.problems.join('; '));
    assert.ok(Math.abs(v.throughputDrift) < 0.05);
  });

  it('fails when throughput drifts down by more than 10 %', () => {
    const v = judgeSoak(run(40, (i) => ({ settledPerSec: i < 20 ? 10 : 8.5 })));
    assert.equal(v.ok, false);
    assert.match(v.problems.join(), /throughput drifted -15\.0 %/);
  });

  it('fails when memory keeps growing, and ignores small absolute growth', () => {
    const leaking = judgeSoak(run(40, (i) => ({ rssMb: { api: 100 + i * 10, worker: 20 + i } })));
    assert.equal(leaking.ok, false);
    assert.deepEqual(leaking.growth.filter((g) => !g.ok).map((g) => `${g.metric} ${g.process}`), ['rssMb api']);
  });

  it("reports the dev chain's growth without judging it (anvil keeps its chain in memory)", () => {
    const v = judgeSoak(run(40, (i) => ({ rssMb: { anvil: 30 + i * 10 } })));
    assert.equal(v.ok, true, v.problems.join('; '));
  });

  it('fails when open handles keep growing', () => {
    const v = judgeSoak(run(40, (i) => ({ fds: { worker: 40 + i * 10 } })));
    assert.deepEqual(v.growth.filter((g) => !g.ok).map((g) => g.process), ['worker']);
  });

  it('reports memory growth in a run under 10 minutes (cache warm-up) without failing on it', () => {
    const v = judgeSoak(run(18, (i) => ({ rssMb: { temporal: 100 + i * 10 } }), 10));
    assert.equal(v.ok, true, v.problems.join('; '));
    assert.ok((v.growth.find((g) => g.process === 'temporal')?.growth ?? 0) > 0.3);
  });

  it('allows a short run twice the drift (its quarters are a handful of samples), and no more', () => {
    assert.equal(judgeSoak(run(18, (i) => ({ settledPerSec: i < 9 ? 10 : 8.5 }), 10)).ok, true);
    assert.equal(judgeSoak(run(18, (i) => ({ settledPerSec: i < 9 ? 10 : 7.5 }), 10)).ok, false);
  });

  it('cannot judge a run too short to have quarters', () => {
    assert.equal(judgeSoak(run(3, () => ({}))).ok, false);
  });

  it('median and quarters', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.deepEqual(quarter(run(8, () => ({}), 10), 3).map((s) => s.t), [60, 70]);
  });
});
