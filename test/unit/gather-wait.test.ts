import assert from 'node:assert/strict';
import fc from 'fast-check';
import { batchClaimSize, gatherWaitMs, type BatchSizes, type GatherPace } from '../../src/domain/gather-wait.js';

const pace: GatherPace = { maxPayments: 100, maxWaitMs: 5000, pollMs: 200 };

describe('gatherWaitMs: a shard looks again only when a batch can be due', function () {
  it('an empty queue is looked at once a second (a quarter of the window when shorter), never more often than the poll interval', function () {
    assert.equal(gatherWaitMs({ nowMs: 10_000, ready: 0, oldestAtMs: undefined, watchingSinceMs: 0 }, pace), 1000);
    assert.equal(gatherWaitMs({ nowMs: 10_000, ready: 0, oldestAtMs: undefined, watchingSinceMs: 0 }, { ...pace, maxWaitMs: 2000 }), 500);
    assert.equal(gatherWaitMs({ nowMs: 10_000, ready: 0, oldestAtMs: undefined, watchingSinceMs: 0 }, { ...pace, maxWaitMs: 100 }), 200);
  });

  it('wakes at the oldest payment\'s deadline when the batch cannot fill before it', function () {
    // Two payments in 4.7 s: far from 100; the oldest is due 300 ms from now.
    assert.equal(gatherWaitMs({ nowMs: 10_000, ready: 2, oldestAtMs: 5_300, watchingSinceMs: 0 }, pace), 300);
  });

  it('looks sooner when the rate seen so far could fill the batch first', function () {
    // 90 payments in 900 ms: 10 more come in about 100 ms at that rate, so look at the poll interval.
    assert.equal(gatherWaitMs({ nowMs: 10_000, ready: 90, oldestAtMs: 9_100, watchingSinceMs: 0 }, pace), 200);
    // 20 in 1 s: 80 more take 4 s at that rate; half of that is 2 s, but the one-second look comes first.
    assert.equal(gatherWaitMs({ nowMs: 10_000, ready: 20, oldestAtMs: 9_000, watchingSinceMs: 0 }, pace), 1000);
  });

  it('never sleeps past a due batch nor past the rate\'s fill time, and never below the poll interval', function () {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 10, max: 60_000 }),
        fc.integer({ min: 10, max: 1_000 }),
        (ready, maxPayments, ageMs, maxWaitMs, pollMs) => {
          const now = 100_000;
          const oldest = ready > 0 ? now - ageMs : undefined;
          const wait = gatherWaitMs({ nowMs: now, ready, oldestAtMs: oldest, watchingSinceMs: 0 }, { maxPayments, maxWaitMs, pollMs });
          assert.ok(wait >= pollMs);
          assert.ok(wait <= Math.max(pollMs, 1000));
          if (oldest !== undefined) assert.ok(wait <= Math.max(pollMs, oldest + maxWaitMs - now));
        },
      ),
    );
  });
});

describe('batchClaimSize: a due batch takes every ready payment, up to the largest batch', function () {
  const sizes: BatchSizes = { maxPayments: 100, maxWaitMs: 5000, maxPaymentsUnderBacklog: 400 };

  it('claims nothing before maxPayments are ready or the oldest has waited the window', function () {
    assert.equal(batchClaimSize(0, undefined, sizes), 0);
    assert.equal(batchClaimSize(99, 4_999, sizes), 0);
  });

  it('a window that ran out takes what is ready, however few', function () {
    assert.equal(batchClaimSize(3, 5_000, sizes), 3);
  });

  it('more than a batch ready takes them all (168 was claimed as 100 before, the rest waiting a whole round), up to the largest batch', function () {
    assert.equal(batchClaimSize(100, 10, sizes), 100);
    assert.equal(batchClaimSize(168, 10, sizes), 168);
    assert.equal(batchClaimSize(1_000, 10, sizes), 400);
  });

  it('a largest batch set below maxPayments does not shrink batches below maxPayments', function () {
    assert.equal(batchClaimSize(250, 10, { ...sizes, maxPaymentsUnderBacklog: 50 }), 100);
  });

  it('never claims more than is ready, nor more than the largest batch, and claims whenever a batch is due', function () {
    fc.assert(
      fc.property(fc.nat(2_000), fc.nat(20_000), fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 1_000 }), (ready, waited, maxPayments, under) => {
        const s = { maxPayments, maxWaitMs: 5000, maxPaymentsUnderBacklog: under };
        const n = batchClaimSize(ready, ready > 0 ? waited : undefined, s);
        assert.ok(n <= ready && n <= Math.max(maxPayments, under));
        const due = ready > 0 && (ready >= maxPayments || waited >= 5000);
        assert.equal(n > 0, due);
      }),
    );
  });
});

describe('group commit (BATCH_MIN_PAYMENTS): a free shard sends its first ready payment at once', function () {
  const sizes: BatchSizes = { maxPayments: 100, minPayments: 1, maxWaitMs: 5000, maxPaymentsUnderBacklog: 400 };

  it('one ready payment is a due batch, whatever the window; every ready one goes, up to the largest batch', function () {
    assert.equal(batchClaimSize(1, 0, sizes), 1);
    assert.equal(batchClaimSize(37, 0, sizes), 37);
    assert.equal(batchClaimSize(900, 0, sizes), 400);
  });

  it('a minimum batch waits for that many, or for the window', function () {
    assert.equal(batchClaimSize(9, 100, { ...sizes, minPayments: 10 }), 0);
    assert.equal(batchClaimSize(10, 100, { ...sizes, minPayments: 10 }), 10);
    assert.equal(batchClaimSize(3, 5000, { ...sizes, minPayments: 10 }), 3);
    assert.equal(batchClaimSize(99, 100, { ...sizes, minPayments: 500 }), 0, 'a minimum above the batch size means the batch size');
  });

  it('an idle shard under group commit looks every poll interval: any look may be due', function () {
    assert.equal(gatherWaitMs({ nowMs: 10_000, ready: 0, oldestAtMs: undefined, watchingSinceMs: 0 }, { ...pace, minPayments: 1 }), 200);
    assert.equal(gatherWaitMs({ nowMs: 10_000, ready: 0, oldestAtMs: undefined, watchingSinceMs: 0 }, { ...pace, minPayments: 10 }), 1000);
  });
});

