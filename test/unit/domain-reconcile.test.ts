import assert from 'node:assert/strict';
import { reconcile, type ChainSettlement, type StoreSettlement } from '../../src/domain/reconcile.js';

const row = (paymentId: string, extra: Partial<StoreSettlement> = {}): StoreSettlement & ChainSettlement => ({
  paymentId,
  amount: '100',
  transaction: '0xaa',
  blockNumber: '7',
  ...extra,
});

describe('domain/reconcile', function () {
  it('finds nothing when store and chain agree', function () {
    assert.deepEqual(reconcile([row('a'), row('b')], [row('b'), row('a', { transaction: '0xAA' })]), []);
  });

  it('names every kind of difference', function () {
    const diffs = reconcile(
      [row('only-store'), row('amount', { amount: '5' }), row('tx', { transaction: '0xbb' }), row('block', { blockNumber: '8' }), row('twice')],
      [row('only-chain'), row('amount'), row('tx'), row('block'), row('twice'), row('twice', { transaction: '0xcc' })],
    );
    assert.deepEqual(
      diffs.map((d) => `${d.kind}:${d.paymentId}`).sort(),
      ['amount_differs:amount', 'block_differs:block', 'missing_in_store:only-chain', 'missing_on_chain:only-store', 'settled_more_than_once:twice', 'transaction_differs:tx'].sort(),
    );
  });
});
