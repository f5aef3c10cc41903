import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { paymentStateInBatch, settledPaymentState } from '../../src/domain/payment.js';
import { shardOf } from '../../src/store/settlement/queue.js';

describe('settlement shards: pure parts', () => {
  it('routes a payment to the same shard every time, and spreads payments evenly', () => {
    const ids = Array.from({ length: 4000 }, () => randomUUID());
    for (const id of ids.slice(0, 50)) assert.equal(shardOf(id, 4), shardOf(id, 4));
    const counts = [0, 0, 0, 0];
    for (const id of ids) counts[shardOf(id, 4)]! += 1;
    for (const n of counts) assert.ok(n > 850 && n < 1150, `shard sizes ${counts.join(', ')}`);
    for (const id of ids.slice(0, 50)) assert.equal(shardOf(id, 1), 0);
  });

  it('gives each payment of a batch the batch state a poll must show', () => {
    const at = new Date('2026-11-23T10:00:00Z');
    assert.deepEqual(paymentStateInBatch({ _id: 'b', status: 'RETRYING', transaction: '0xold' }), { status: 'QUEUED', attempts: 1 });
    assert.deepEqual(paymentStateInBatch({ _id: 'b', status: 'SUBMITTED', transaction: '0xt' }), { status: 'SUBMITTED', attempts: 1, batchId: 'b', transaction: '0xt' });
    assert.deepEqual(paymentStateInBatch({ _id: 'b', status: 'CONFIRMED', transaction: '0xt', blockNumber: '7', confirmedAt: at }), {
      status: 'CONFIRMED',
      attempts: 1,
      batchId: 'b',
      transaction: '0xt',
      blockNumber: '7',
      confirmedAt: at.toISOString(),
    });
    const failed = paymentStateInBatch({ _id: 'b', status: 'FAILED', failureReason: 'settlement_reverted: x' });
    assert.equal(failed.status, 'FAILED');
    assert.equal(failed.failureReason, 'settlement_reverted: x');
  });

  it('turns a batch outcome signal into the payment workflow result', () => {
    const s = settledPaymentState({ status: 'CONFIRMED', batchId: 'b', transaction: '0xt', blockNumber: '9', confirmedAt: '2026-11-23T10:00:00.000Z' });
    assert.equal(s.status, 'CONFIRMED');
    assert.equal(s.blockNumber, '9');
    const f = settledPaymentState({ status: 'FAILED', batchId: 'b', failureReason: 'r' });
    assert.deepEqual(f, { status: 'FAILED', attempts: 1, batchId: 'b', failureReason: 'r' });
  });
});
