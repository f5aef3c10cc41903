import assert from 'node:assert/strict';
import { newId } from '@credit-facilitator/wire/ids';
import { findBatch, recordBatch } from '../../src/store/settlement/batches.js';
import { world, type World } from '../helpers/world.js';

/**
 * A batch's record keeps its payments' outcome (store/payment-outcomes.ts), so once it says how the
 * batch ended it must never say otherwise: an attempt of an earlier step that Temporal gave up on
 * (a heartbeat timeout while the store or the server was down) may still write after the end.
 */
describe('store: a finished batch record is final', function () {
  this.timeout(60_000);
  let w: World;
  before(async function () {
    w = await world();
  });

  const ids = [newId(), newId()];
  const moving = (batchId: string, status: 'SUBMITTED' | 'RETRYING') => ({ _id: batchId, shard: 0, status, payments: 2, paymentIds: ids, ...(status === 'SUBMITTED' ? { transaction: `0x${'ab'.repeat(32)}` } : {}) });
  const confirmed = (batchId: string) => ({ _id: batchId, shard: 0, status: 'CONFIRMED' as const, payments: 2, paymentIds: ids, transaction: `0x${'cd'.repeat(32)}`, blockNumber: '42', confirmedAt: new Date() });

  it('a batch still moving goes back and forth between SUBMITTED and RETRYING', async function () {
    const batchId = newId();
    assert.equal(await recordBatch(w.store.c, moving(batchId, 'SUBMITTED')), true);
    assert.equal((await findBatch(w.store.c, batchId))?.status, 'SUBMITTED');
    assert.equal(await recordBatch(w.store.c, moving(batchId, 'RETRYING')), true);
    assert.equal((await findBatch(w.store.c, batchId))?.status, 'RETRYING');
    assert.equal(await recordBatch(w.store.c, moving(batchId, 'SUBMITTED')), true);
    assert.equal((await findBatch(w.store.c, batchId))?.status, 'SUBMITTED');
  });

  it('a stale SUBMITTED or RETRYING written after the end leaves the CONFIRMED record as it was', async function () {
    const batchId = newId();
    await recordBatch(w.store.c, moving(batchId, 'SUBMITTED'));
    assert.equal(await recordBatch(w.store.c, confirmed(batchId)), true);
    assert.equal(await recordBatch(w.store.c, moving(batchId, 'RETRYING')), false);
    assert.equal(await recordBatch(w.store.c, moving(batchId, 'SUBMITTED')), false);
    const doc = await findBatch(w.store.c, batchId);
    assert.equal(doc?.status, 'CONFIRMED');
    assert.equal(doc?.transaction, `0x${'cd'.repeat(32)}`);
    assert.equal(doc?.blockNumber, '42');
  });

  it('stale writes racing the end never win, whatever order they land in', async function () {
    for (let round = 0; round < 5; round++) {
      const batchId = newId();
      await recordBatch(w.store.c, moving(batchId, 'SUBMITTED'));
      const stale = Array.from({ length: 6 }, (_, i) => recordBatch(w.store.c, moving(batchId, i % 2 === 0 ? 'RETRYING' : 'SUBMITTED')));
      await Promise.all([recordBatch(w.store.c, confirmed(batchId)), ...stale]);
      await Promise.all(stale.slice(0, 3).map(() => recordBatch(w.store.c, moving(batchId, 'RETRYING'))));
      assert.equal((await findBatch(w.store.c, batchId))?.status, 'CONFIRMED', `round ${round}`);
    }
  });

  it('the first write of a batch that ended before any other is its end', async function () {
    const batchId = newId();
    await recordBatch(w.store.c, { _id: batchId, shard: 0, status: 'FAILED', payments: 2, paymentIds: ids, failureReason: 'reverted' });
    assert.equal(await recordBatch(w.store.c, moving(batchId, 'SUBMITTED')), false);
    const doc = await findBatch(w.store.c, batchId);
    assert.equal(doc?.status, 'FAILED');
    assert.equal(doc?.failureReason, 'reverted');
  });
});
