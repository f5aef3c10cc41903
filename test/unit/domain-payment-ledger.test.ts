import assert from 'node:assert/strict';
import { canonicalLine, dayKey, isAfter, ledgerIds, ledgerWrites, minuteKey, newestFirst, type LedgerLine } from '../../src/domain/payment-ledger.js';

const line = (paymentId: string, capturedAt: string, extra: Partial<LedgerLine & { merchantId: string }> = {}): LedgerLine & { merchantId: string } => ({
  merchantId: 'm1',
  paymentId,
  capturedAt,
  status: 'CONFIRMED',
  payer: 'b1',
  amount: '100',
  asset: '0xasset',
  network: 'eip155:84532',
  orderRef: `order-${paymentId}`,
  batchId: 'batch-1',
  ...extra,
});

describe('domain/payment-ledger', function () {
  it('keys days and minutes in UTC, so they sort as time does', function () {
    const at = new Date('2026-03-04T05:06:59.999Z');
    assert.equal(dayKey(at), '20260304');
    assert.equal(minuteKey(at), '202603040506');
    assert.ok(minuteKey(new Date('2026-12-31T23:59:00Z')) < minuteKey(new Date('2027-01-01T00:00:00Z')));
  });

  it('orders newest first, then by id, and says what comes after a cursor', function () {
    const a = { capturedAt: '2026-01-01T00:00:01.000Z', paymentId: 'a' };
    const b = { capturedAt: '2026-01-01T00:00:01.000Z', paymentId: 'b' };
    const c = { capturedAt: '2026-01-01T00:00:02.000Z', paymentId: 'c' };
    assert.deepEqual([a, b, c].sort(newestFirst).map((x) => x.paymentId), ['c', 'b', 'a']);
    assert.ok(isAfter(a, b) && isAfter(b, c) && !isAfter(c, b) && !isAfter(b, b));
  });

  it("groups a writer's lines into a new page per merchant and minute, each joining its minute, and one write per day, merchant and orderRef", function () {
    const w = ledgerWrites('batch-1', [
      line('p1', '2026-01-01T10:00:01.000Z'),
      line('p2', '2026-01-01T10:00:59.000Z'),
      line('p3', '2026-01-01T10:01:00.000Z', { orderRef: 'order-p1' }),
      line('p4', '2026-01-02T00:00:00.000Z', { merchantId: 'm2' }),
    ]);
    const page = (m: string, minute: string) => ledgerIds.writerPage(m, minute, 'batch-1');
    assert.deepEqual([...w.pages.keys()].sort(), [page('m1', '202601011000'), page('m1', '202601011001'), page('m2', '202601020000')].sort());
    assert.equal(page('m1', '202601011000'), 'p|m1|202601011000|batch-1');
    assert.notEqual(page('m1', '202601011000'), ledgerIds.page('m1', '202601011000'));
    assert.equal(w.pages.get(page('m1', '202601011000'))!.lines.length, 2);
    assert.deepEqual([...w.minutes.keys()].sort(), [ledgerIds.minute('m1', '202601011000'), ledgerIds.minute('m1', '202601011001'), ledgerIds.minute('m2', '202601020000')].sort());
    assert.deepEqual([...w.days.get(ledgerIds.day('m1', '20260101'))!.minutes].sort(), ['202601011000', '202601011001']);
    assert.deepEqual([...w.merchants.get(ledgerIds.merchant('m2'))!.days], ['20260102']);
    assert.deepEqual([...w.orders.get(ledgerIds.order('m1', 'order-p1'))!.paymentIds], ['p1', 'p3']);
  });

  it('writes a line with the same fields in the same order however it was built (the store set-add compares documents)', function () {
    const { merchantId: _m, ...l } = line('p1', '2026-01-01T10:00:01.000Z');
    const shuffled = Object.fromEntries(Object.entries(l).reverse()) as unknown as LedgerLine;
    assert.deepEqual(Object.keys(canonicalLine(shuffled)), Object.keys(canonicalLine(l)));
    assert.equal(JSON.stringify(canonicalLine(shuffled)), JSON.stringify(canonicalLine(l)));
  });
});
