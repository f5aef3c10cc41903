import assert from 'node:assert/strict';
import { newId } from '@credit-facilitator/wire/ids';
import { sortForeignClaims } from '../../src/settlement/foreign-claims.js';
import { claimForBatch, findClaims, voidClaimId } from '../../src/store/settlement/claims.js';
import { recordBatch } from '../../src/store/settlement/batches.js';
import { world, type World } from '../helpers/world.js';

/**
 * A gather attempt Temporal gave up on can still claim payments for its batch id after the live
 * attempt returned another set: the batch then ends without them. Such an orphaned claim must not
 * strand its payment (dropped from the queue as another batch's, never settled): it is released
 * once its batch has ended without it, and only then.
 */
describe('settlement: a claim orphaned by a batch that ended without its payment is released', function () {
  this.timeout(60_000);
  let w: World;
  before(async function () {
    w = await world();
  });

  const claim = (paymentId: string, batchId: string) => w.store.c.settlementClaims.insertOne({ _id: paymentId, batchId, at: new Date() });
  const confirmed = (batchId: string, paymentIds: string[]) =>
    recordBatch(w.store.c, { _id: batchId, shard: 0, status: 'CONFIRMED', payments: paymentIds.length, paymentIds, transaction: `0x${'cd'.repeat(32)}`, blockNumber: '7', confirmedAt: new Date() });

  it('sorts what a batch could not claim: a void, a batch that lists it, an orphan, and a batch not recorded yet', async function () {
    const [listed, orphan, unrecorded, submittedWithout, voided, unclaimed] = Array.from({ length: 6 }, () => newId());
    const ended = newId();
    const submitted = newId();
    await confirmed(ended, [listed!]);
    await recordBatch(w.store.c, { _id: submitted, shard: 0, status: 'SUBMITTED', payments: 1, paymentIds: [newId()], transaction: `0x${'ab'.repeat(32)}` });
    await claim(listed!, ended);
    await claim(orphan!, ended);
    await claim(unrecorded!, newId());
    await claim(submittedWithout!, submitted);
    await claim(voided!, voidClaimId(voided!));

    const sorted = await sortForeignClaims(w.store.c, [listed!, orphan!, unrecorded!, submittedWithout!, voided!, unclaimed!]);
    assert.deepEqual(sorted, { voided: [voided], elsewhere: [listed], inBatch: [], released: [orphan], undecided: [unrecorded, submittedWithout, unclaimed] });

    const left = new Set((await findClaims(w.store.c, [listed!, orphan!, unrecorded!, submittedWithout!, voided!])).map((c) => c._id));
    assert.deepEqual([...left].sort(), [listed!, unrecorded!, submittedWithout!, voided!].sort(), "only the orphan's claim is gone");
    const next = newId();
    assert.deepEqual([...(await claimForBatch(w.store.c, next, [orphan!]))], [orphan], 'the next batch claims the released payment');
  });

  it("a release never takes a claim that another batch made since: the delete is a compare-and-set on the orphaning batch", async function () {
    const payment = newId();
    const ended = newId();
    await confirmed(ended, [newId()]);
    await claim(payment, ended);
    const racing = await Promise.all([sortForeignClaims(w.store.c, [payment]), sortForeignClaims(w.store.c, [payment])]);
    assert.ok(racing.every((s) => s.released.includes(payment)));
    const next = newId();
    await claimForBatch(w.store.c, next, [payment]);
    assert.deepEqual(await sortForeignClaims(w.store.c, [payment]), { voided: [], elsewhere: [], inBatch: [], released: [], undecided: [payment] }, 'a batch not recorded yet is waited for');
    assert.equal((await findClaims(w.store.c, [payment]))[0]?.batchId, next, "the new batch's claim stands");
  });
});
