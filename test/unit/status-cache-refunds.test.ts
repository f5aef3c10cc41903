import assert from 'node:assert/strict';
import type { Collections } from '../../src/store/collections.js';
import { PaymentStatusCache } from '../../src/payments/status-cache.js';
import type { BoardSnapshot } from '../../src/payments/settlement-board.js';

const MINUTE = 60_000;
const readAt = Date.UTC(2026, 10, 27, 12, 0, 30); // 30 s into a minute
const coversSince = Date.UTC(2026, 10, 27, 11, 59, 0); // the start of the minute before

/** A board as read at `readAt`, naming `refunds` (no batches, so nothing else is read). */
function cacheWith(refunds: string[]) {
  const board: BoardSnapshot = { batchIds: [], batchVersions: new Map(), voids: new Set(), refunds: new Set(refunds), coversSinceMs: coversSince, backlog: 0, staleShards: [], pendingByShard: [], readAtMs: readAt };
  let reads = 0;
  const cache = new PaymentStatusCache(undefined, {
    read: async () => {
      reads++;
      return board;
    },
  });
  return { cache, reads: () => reads };
}

const noStore = {} as Collections;
const payment = (id: string, capturedAt: number) => ({ _id: id, capturedAt: new Date(capturedAt) });

describe('PaymentStatusCache: whether a CONFIRMED poll must read the refunds', function () {
  it('not for a payment captured inside the board window that the board does not name', async function () {
    const { cache, reads } = cacheWith([]);
    assert.equal(await cache.mayHaveRefunds(noStore, 2, payment('p', readAt - 20_000), readAt), false);
    assert.equal(reads(), 1);
  });

  it('yes when the board names it, even if the refund was then refused (the read tells)', async function () {
    const { cache } = cacheWith(['p']);
    assert.equal(await cache.mayHaveRefunds(noStore, 2, payment('p', readAt - 20_000), readAt), true);
    assert.equal(await cache.mayHaveRefunds(noStore, 2, payment('q', readAt - 20_000), readAt), false);
  });

  it('yes for a payment older than the window or within the clock-skew margin of its start', async function () {
    const { cache } = cacheWith([]);
    assert.equal(await cache.mayHaveRefunds(noStore, 2, payment('old', coversSince - MINUTE), readAt), true);
    assert.equal(await cache.mayHaveRefunds(noStore, 2, payment('edge', coversSince + 4_999), readAt), true);
    assert.equal(await cache.mayHaveRefunds(noStore, 2, payment('inside', coversSince + 5_000), readAt), false);
    assert.equal(await cache.mayHaveRefunds(noStore, 2, payment('bad', Number.NaN), readAt), true);
  });

  it('yes at once for a refund this process is recording, without the board', async function () {
    const { cache, reads } = cacheWith([]);
    cache.rememberRefund('p');
    assert.equal(await cache.mayHaveRefunds(noStore, 2, payment('p', readAt - 20_000), readAt), true);
    assert.equal(reads(), 0);
  });
});
