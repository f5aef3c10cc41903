import assert from 'node:assert/strict';
import { batchPacePerSec } from '../../bench/pace.js';

describe('bench batch pace', () => {
  it("sums each shard's median round: a batch's payments over the time since the shard's previous confirmation", () => {
    // Shard 0: 200 every 5 s (40/s); shard 1: 100 every 4 s (25/s), starting later.
    const shard0 = [0, 1, 2, 3].map((i) => ({ shard: 0, confirmedAtMs: 5000 + i * 5000, payments: 200 }));
    const shard1 = [0, 1, 2].map((i) => ({ shard: 1, confirmedAtMs: 7000 + i * 4000, payments: 100 }));
    assert.equal(batchPacePerSec([...shard1, ...shard0]), 40 + 25);
  });

  it('is not moved by the first batch (gathered before any round) nor by the remainder after the arrivals stop', () => {
    const rounds = [
      { shard: 0, confirmedAtMs: 4000, payments: 999 },
      { shard: 0, confirmedAtMs: 9000, payments: 100 },
      { shard: 0, confirmedAtMs: 14000, payments: 100 },
      { shard: 0, confirmedAtMs: 19000, payments: 100 },
      { shard: 0, confirmedAtMs: 24000, payments: 7 },
    ];
    assert.equal(batchPacePerSec(rounds), 20);
  });

  it('tells no pace when a shard settled in a single batch, or nothing settled', () => {
    assert.equal(batchPacePerSec([{ shard: 0, confirmedAtMs: 4000, payments: 50 }, { shard: 1, confirmedAtMs: 5000, payments: 50 }, { shard: 1, confirmedAtMs: 9000, payments: 50 }]), null);
    assert.equal(batchPacePerSec([]), null);
  });
});
