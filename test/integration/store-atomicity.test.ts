import assert from 'node:assert/strict';
import { newId } from '@credit-facilitator/wire/ids';
import { closeHoldsOfBorrowers, convertHoldToDebt, findBorrower, holdCredit, insertBorrower, releaseHold } from '../../src/store/borrowers.js';
import { world, type World } from '../helpers/world.js';

/** Concurrent writes to one document, as concurrent payments of one borrower make them: none may be lost. */
describe('store: concurrent updates of one document', function () {
  let w: World;
  before(async function () {
    w = await world();
  });

  async function activeBorrower(available: number, holds: Record<string, number> = {}): Promise<string> {
    const now = new Date();
    const borrowerId = newId();
    await insertBorrower(w.store.c, { _id: borrowerId, status: 'ACTIVE', creditLimit: 1_000_000, available, holds, debt: 0, createdAt: now, updatedAt: now });
    return borrowerId;
  }

  it('books every confirmed hold into debt when they all confirm at once', async function () {
    const holds = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [newId(), 100 + i]));
    const borrowerId = await activeBorrower(0, holds);
    const closed = await Promise.all(Object.keys(holds).map((holdId) => convertHoldToDebt(w.store.c, borrowerId, holdId)));
    assert.deepEqual(closed, Object.keys(holds).map(() => true));
    const b = await findBorrower(w.store.c, borrowerId);
    assert.equal(b?.debt, Object.values(holds).reduce((s, a) => s + a, 0));
    assert.deepEqual(b?.holds, {});
  });

  it('grants concurrent holds only up to the available credit', async function () {
    const borrowerId = await activeBorrower(500);
    const results = await Promise.all(Array.from({ length: 10 }, () => holdCredit(w.store.c, borrowerId, newId(), 100)));
    assert.equal(results.filter((r) => r === 'held').length, 5);
    assert.equal(results.filter((r) => r === 'insufficient_credit').length, 5);
    const b = await findBorrower(w.store.c, borrowerId);
    assert.equal(b?.available, 0);
    assert.equal(Object.keys(b?.holds ?? {}).length, 5);
  });

  it('stores the open holds as one JSON text, and moves a document written with a map of holds to it on its next write', async function () {
    const c = w.store.c;
    const borrowerId = await activeBorrower(1000);
    const held = newId();
    assert.equal(await holdCredit(c, borrowerId, held, 100), 'held');
    const stored = await c.borrowers.findOne({ _id: borrowerId });
    assert.deepEqual(JSON.parse(stored?.holdsJson ?? 'null'), { [held]: 100 });
    assert.equal(stored?.holds, undefined, 'no map of holds is stored');

    // A document as the release before holdsJson wrote it: holds in a map, no text.
    const now = new Date();
    const legacyId = newId();
    const [a, b] = [newId(), newId()];
    await c.borrowers.insertOne({ _id: legacyId, status: 'ACTIVE', creditLimit: 1000, available: 700, holds: { [a]: 200, [b]: 100 }, debt: 0, fence: 3, createdAt: now, updatedAt: now });
    assert.deepEqual((await findBorrower(c, legacyId))?.holds, { [a]: 200, [b]: 100 });
    assert.equal(await holdCredit(c, legacyId, a, 200), 'already_held', 'a hold in the old map is seen');
    await closeHoldsOfBorrowers(c, new Map([[legacyId, [a]]]), 'debt');
    const moved = await c.borrowers.findOne({ _id: legacyId });
    assert.equal(moved?.holds, undefined, 'the map is gone after the write');
    assert.deepEqual(JSON.parse(moved?.holdsJson ?? 'null'), { [b]: 100 });
    assert.equal(await releaseHold(c, legacyId, b), true);
    const after = await findBorrower(c, legacyId);
    assert.deepEqual([after?.holds, after?.available, after?.debt], [{}, 800, 200]);
  });
});
