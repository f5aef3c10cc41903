import assert from 'node:assert/strict';
import { holdsByBorrower } from '../../src/settlement/shard.js';
import { holdsClosing } from '../../src/store/borrowers.js';
import type { BorrowerDoc } from '../../src/store/documents.js';
import { withBatchAnnounced } from '../../src/domain/batch-board.js';

const borrower = (holds: Record<string, number>): BorrowerDoc => ({
  _id: 'b1',
  status: 'ACTIVE',
  creditLimit: 1000,
  available: 600,
  holds,
  debt: 100,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

describe('settlement batch end: pure parts', () => {
  it("groups a batch's holds by borrower, in the entries' order", () => {
    const byBorrower = holdsByBorrower([
      { borrowerId: 'a', spendIntentId: 's1' },
      { borrowerId: 'b', spendIntentId: 's2' },
      { borrowerId: 'a', spendIntentId: 's3' },
    ]);
    assert.deepEqual([...byBorrower], [
      ['a', ['s1', 's3']],
      ['b', ['s2']],
    ]);
  });

  it('closes the open holds into debt or available, skips closed ones, and changes nothing once all are closed', () => {
    const b = borrower({ s1: 100, s2: 50, other: 150 });
    assert.deepEqual(holdsClosing(b, ['s1', 's2', 'gone'], 'debt'), { closed: ['s1', 's2'], change: { holds: { other: 150 }, debt: 250 } });
    assert.deepEqual(holdsClosing(b, ['s2'], 'available'), { closed: ['s2'], change: { holds: { s1: 100, other: 150 }, available: 650 } });
    assert.equal(holdsClosing(borrower({ other: 150 }), ['s1', 's2'], 'debt'), undefined, 'a repeated close changes nothing');
    assert.deepEqual(b.holds, { s1: 100, s2: 50, other: 150 }, 'the document read is left alone');
  });

  it("keeps a shard's latest batches, newest last, each once", () => {
    assert.deepEqual(withBatchAnnounced([], 'x'), ['x']);
    assert.deepEqual(withBatchAnnounced(['a', 'b', 'c'], 'b'), ['a', 'c', 'b'], 'a repeated announce moves it last');
    assert.deepEqual(withBatchAnnounced(['a', 'b', 'c'], 'd', 3), ['b', 'c', 'd']);
  });
});
