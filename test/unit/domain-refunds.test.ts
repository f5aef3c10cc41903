import assert from 'node:assert/strict';
import { nonceBindsPayment, refundAuthorizationProblems, refundTotals, type RefundAuthorizationFields } from '../../src/domain/refunds.js';
import { reconcileRefunds, type RefundFact } from '../../src/domain/reconcile.js';

const paymentId = '0b7e1b9e-3c1a-4f5e-9a4d-1c2b3d4e5f60';
const settlement = '0x' + 'ab'.repeat(20);
const payout = '0x' + 'cd'.repeat(20);
const now = 1_800_000_000;
const nonce = `0x${paymentId.replace(/-/g, '')}${'11'.repeat(16)}`;

const auth = (over: Partial<RefundAuthorizationFields> = {}): RefundAuthorizationFields => ({
  from: payout,
  to: settlement,
  value: '250',
  validAfter: '0',
  validBefore: String(now + 3600),
  nonce,
  ...over,
});
const expect = { paymentId, settlement, payoutAddress: payout, amount: 250n, nowSeconds: now, minValidSeconds: 600 };

describe('domain/refunds', function () {
  it('accepts an authorization that pays the contract from the payout address for this payment and amount', function () {
    assert.deepEqual(refundAuthorizationProblems(auth({ from: payout.toUpperCase().replace('0X', '0x') }), expect), []);
  });

  it('names every problem', function () {
    const problems = refundAuthorizationProblems(
      auth({ to: payout, from: settlement, value: '251', nonce: `0x${'00'.repeat(16)}${'11'.repeat(16)}`, validBefore: String(now + 599), validAfter: String(now) }),
      expect,
    );
    assert.deepEqual(problems.sort(), ['expires_too_soon', 'from_not_payout_address', 'nonce_not_bound_to_payment', 'not_yet_valid', 'to_not_settlement_contract', 'value_not_amount']);
  });

  it('binds the nonce to the payment by its first 16 bytes', function () {
    assert.equal(nonceBindsPayment(nonce, paymentId), true);
    assert.equal(nonceBindsPayment(nonce.toUpperCase().replace('0X', '0x'), paymentId), true);
    assert.equal(nonceBindsPayment(nonce, '1b7e1b9e-3c1a-4f5e-9a4d-1c2b3d4e5f60'), false);
    assert.equal(nonceBindsPayment(nonce.slice(0, 40), paymentId), false);
  });

  it('counts pending refunds against the payment until they fail', function () {
    const t = refundTotals([
      { amount: '100', status: 'SUCCEEDED' },
      { amount: '50', status: 'PENDING' },
      { amount: '20', status: 'SUBMITTED' },
      { amount: '999', status: 'FAILED' },
    ]);
    assert.deepEqual(t, { reserved: 170n, refunded: 100n });
  });

  it('reconciles refunds by nonce and names each difference', function () {
    const fact = (n: string, over: Partial<RefundFact> = {}): RefundFact => ({ paymentId, nonce: n, amount: '10', transaction: '0xaa', ...over });
    assert.deepEqual(reconcileRefunds([fact('0x01'), fact('0x02')], [fact('0x02', { transaction: '0xAA' }), fact('0x01')]), []);
    const diffs = reconcileRefunds([fact('0x01'), fact('0x02', { amount: '11' }), fact('0x03', { transaction: '0xbb' })], [fact('0x02'), fact('0x03'), fact('0x04')]);
    assert.deepEqual(diffs.map((d) => d.kind).sort(), ['refund_amount_differs', 'refund_missing_in_store', 'refund_missing_on_chain', 'refund_transaction_differs']);
  });
});
