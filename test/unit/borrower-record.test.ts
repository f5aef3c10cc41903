import assert from 'node:assert/strict';
import { borrowerFromStored, storedBorrower, storedChange } from '../../src/store/borrower-record.js';
import type { BorrowerDoc, StoredBorrowerDoc } from '../../src/store/documents.js';

const borrower: BorrowerDoc = {
  _id: 'b1',
  status: 'ACTIVE',
  creditLimit: 1000,
  available: 600,
  holds: { si_a: 250, si_b: 50 },
  debt: 100,
  fence: 7,
  createdAt: new Date(0),
  updatedAt: new Date(0),
};

describe('borrower record: open holds stored as one JSON text', () => {
  it('stores the holds as holdsJson and reads them back as the same map', () => {
    const stored = storedBorrower(borrower);
    assert.equal(stored.holdsJson, '{"si_a":250,"si_b":50}');
    assert.equal('holds' in stored, false, 'no map beside the text');
    assert.deepEqual(borrowerFromStored(stored), borrower);
  });

  it('reads a document written before holdsJson from its map', () => {
    const { holds: _holds, ...rest } = borrower;
    const legacy: StoredBorrowerDoc = { ...rest, holds: { si_old: 9 } };
    assert.deepEqual(borrowerFromStored(legacy).holds, { si_old: 9 });
    assert.deepEqual(borrowerFromStored({ ...rest }).holds, {}, 'a document with neither has no holds');
  });

  it('writes a change of holds as holdsJson and drops an older map; other changes are written as they are', () => {
    assert.deepEqual(storedChange({ holds: { si_c: 1 }, available: 5 }), {
      $set: { available: 5, holdsJson: '{"si_c":1}' },
      $unset: { holds: '' },
    });
    assert.deepEqual(storedChange({ debt: 3 }), { $set: { debt: 3 } });
    assert.deepEqual(storedChange({ holds: {} }), { $set: { holdsJson: '{}' }, $unset: { holds: '' } });
  });

  it('refuses a holdsJson that is not a map of amounts, naming the borrower', () => {
    const { holds: _holds, ...rest } = borrower;
    for (const holdsJson of ['[]', 'null', '{"si_a":"250"}', '7']) {
      assert.throws(() => borrowerFromStored({ ...rest, holdsJson }), /borrower b1 has holdsJson/);
    }
  });
});
