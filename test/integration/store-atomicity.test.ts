import assert from 'node:assert/strict';
import { newId } from '@credit-facilitator/wire/ids';
import { convertHoldToDebt, findBorrower, holdCredit, insertBorrower } from '../../src/store/borrowers.js';
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
});
