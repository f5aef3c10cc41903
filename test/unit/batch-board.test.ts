import assert from 'node:assert/strict';
import { batchBoardOf, batchesToRead, boardWithBatch, keptBatchIsCurrent, type KeptBatch } from '../../src/domain/batch-board.js';

describe("a shard's board of batches: versions beside the list", function () {
  it('a write lists the batch last at its new version and keeps the others', function () {
    const board = boardWithBatch({ batchIds: ['a', 'b'], versions: { a: 'r1', b: 'r2' } }, 'c', 'r3');
    assert.deepEqual(board, { batchIds: ['a', 'b', 'c'], versions: { a: 'r1', b: 'r2', c: 'r3' } });
  });

  it("a later write of a listed batch's record gives it a new version (and moves it last)", function () {
    const board = boardWithBatch({ batchIds: ['a', 'b'], versions: { a: 'r1', b: 'r2' } }, 'a', 'r3');
    assert.deepEqual(board, { batchIds: ['b', 'a'], versions: { a: 'r3', b: 'r2' } });
  });

  it('versions are pruned with the list', function () {
    const board = boardWithBatch({ batchIds: ['a', 'b', 'c'], versions: { a: 'r1', b: 'r2', c: 'r3', gone: 'r0' } }, 'd', 'r4', 3);
    assert.deepEqual(board, { batchIds: ['b', 'c', 'd'], versions: { b: 'r2', c: 'r3', d: 'r4' } });
  });

  it('a listed batch without a version (written by an older worker) stays without one', function () {
    const board = boardWithBatch({ batchIds: ['old', 'a'], versions: { a: 'r1' } }, 'b', 'r2');
    assert.deepEqual(board, { batchIds: ['old', 'a', 'b'], versions: { a: 'r1', b: 'r2' } });
    assert.equal('old' in board.versions, false);
  });
});

describe('the versions a board document holds', function () {
  it('count when written with its current revision', function () {
    assert.deepEqual(batchBoardOf({ batchIds: ['a'], versions: { a: 'r1' }, versionsRev: 'r1', rev: 'r1' }), { batchIds: ['a'], versions: { a: 'r1' } });
  });
  it('count for nothing once a worker older than versions rewrote the list (a new revision, the versions left)', function () {
    assert.deepEqual(batchBoardOf({ batchIds: ['a', 'b'], versions: { a: 'r1' }, versionsRev: 'r1', rev: 'r2' }), { batchIds: ['a', 'b'], versions: {} });
    assert.deepEqual(batchBoardOf({ batchIds: ['a'], rev: 'r1' }), { batchIds: ['a'], versions: {} });
  });
  it('an absent board lists nothing', function () {
    assert.deepEqual(batchBoardOf(null), { batchIds: [], versions: {} });
  });
});

describe('which batches a poll cache reads again on taking a board in', function () {
  const kept: Record<string, KeptBatch> = {
    done: { finished: true, version: 'v1', atMs: 0 },
    same: { finished: false, version: 'v1', atMs: 0 },
    moved: { finished: false, version: 'v1', atMs: 0 },
    untagged: { finished: false, atMs: 0 },
    unversioned: { finished: false, version: 'v1', atMs: 0 },
    doneMoved: { finished: true, version: 'v1', atMs: 0 },
  };
  const versions = new Map([
    ['done', 'v1'],
    ['same', 'v1'],
    ['moved', 'v2'],
    ['untagged', 'v1'],
    ['doneMoved', 'v2'],
    ['new', 'v1'],
  ]);

  it('new batches, and unfinished ones at another version; never a finished one; an unversioned one is left to its TTL', function () {
    const ids = ['done', 'same', 'moved', 'untagged', 'unversioned', 'doneMoved', 'new', 'newUnversioned'];
    assert.deepEqual(
      batchesToRead(ids, versions, (id) => kept[id]),
      ['moved', 'untagged', 'new', 'newUnversioned'],
    );
  });

  it('nothing when the board has not moved', function () {
    assert.deepEqual(batchesToRead(['done', 'same'], versions, (id) => kept[id]), []);
  });
});

describe('whether a poll may answer from its copy of a batch', function () {
  const trust = { ttlMs: 250, recheckMs: 5_000 };
  it('a finished batch always', function () {
    assert.equal(keptBatchIsCurrent({ finished: true, atMs: 0 }, 'v9', 1e9, trust), true);
  });
  it('an unfinished one read at the version the board shows, until the recheck', function () {
    assert.equal(keptBatchIsCurrent({ finished: false, version: 'v1', atMs: 0 }, 'v1', 4_999, trust), true);
    assert.equal(keptBatchIsCurrent({ finished: false, version: 'v1', atMs: 0 }, 'v1', 5_000, trust), false, 'a worker older than versions may have written it');
    assert.equal(keptBatchIsCurrent({ finished: false, version: 'v1', atMs: 0 }, 'v2', 1_000, trust), false);
  });
  it('any unfinished one within the TTL; one the board gives no version only then', function () {
    assert.equal(keptBatchIsCurrent({ finished: false, version: 'v1', atMs: 1_000 }, 'v2', 1_249, trust), true);
    assert.equal(keptBatchIsCurrent({ finished: false, version: 'v1', atMs: 1_000 }, undefined, 1_249, trust), true);
    assert.equal(keptBatchIsCurrent({ finished: false, version: 'v1', atMs: 1_000 }, undefined, 1_250, trust), false);
    assert.equal(keptBatchIsCurrent({ finished: false, atMs: 1_000 }, 'v1', 1_300, trust), false);
  });
});
