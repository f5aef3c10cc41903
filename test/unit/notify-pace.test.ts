import assert from 'node:assert/strict';
import { notifyOffsetMs } from '../../src/settlement/notify-payments.js';

describe('batch end: payment-workflow signals spread evenly', () => {
  it('starts the i-th of n at i/n of the spread, the first at once, and all within the spread', () => {
    assert.deepEqual([0, 1, 2, 3].map((i) => notifyOffsetMs(i, 4, 1000)), [0, 250, 500, 750]);
    assert.equal(notifyOffsetMs(0, 1, 1000), 0, 'a batch of one is not delayed');
    assert.equal(notifyOffsetMs(399, 400, 1500), 1496);
    assert.deepEqual([0, 5, 9].map((i) => notifyOffsetMs(i, 10, 0)), [0, 0, 0], 'spread 0: all at once');
  });
});
