import assert from 'node:assert/strict';
import { newId } from '@credit-facilitator/wire/ids';
import { canonicalLine, ledgerIds, minuteKey, type LedgerLine } from '../../src/domain/payment-ledger.js';
import { ledgerDays, ledgerMinutes, ledgerPage, paymentIdsOfOrder, recordLedgerLines } from '../../src/store/payment-ledger.js';
import { world, type World } from '../helpers/world.js';

/** The merchant ledger on the real store: pages of their own per writer, retries, and pages written whole by earlier releases. */
describe('store: the merchant payment ledger', function () {
  let w: World;
  before(async function () {
    w = await world();
  });

  const line = (merchantId: string, capturedAt: Date, batchId: string, orderRef = `order-${newId()}`): LedgerLine & { merchantId: string } => ({
    merchantId,
    paymentId: newId(),
    capturedAt: capturedAt.toISOString(),
    status: 'CONFIRMED',
    payer: 'borrower-1',
    amount: '1000',
    asset: '0x0000000000000000000000000000000000000001',
    network: 'eip155:84532',
    orderRef,
    batchId,
  });
  const ids = (lines: { paymentId: string }[]) => lines.map((l) => l.paymentId).sort();

  it("lists every writer's lines of a minute once, though a writer repeats itself, and leaves other merchants' alone", async function () {
    const m = newId();
    const other = newId();
    const at = new Date('2026-05-06T07:08:09.000Z');
    const first = [line(m, at, 'batch-a'), line(m, new Date(at.getTime() + 1000), 'batch-a', 'shared-order'), line(other, at, 'batch-a')];
    const second = [line(m, new Date(at.getTime() + 2000), 'batch-b', 'shared-order')];
    await recordLedgerLines(w.store.c, 'batch-a', first);
    await recordLedgerLines(w.store.c, 'batch-b', second);
    await recordLedgerLines(w.store.c, 'batch-a', first); // a retried batch end
    const minute = minuteKey(at);
    assert.deepEqual(ids(await ledgerPage(w.store.c, m, minute)), ids([first[0]!, first[1]!, second[0]!]));
    assert.deepEqual(ids(await ledgerPage(w.store.c, other, minute)), ids([first[2]!]));
    assert.deepEqual(await ledgerMinutes(w.store.c, m, '20260506'), [minute]);
    assert.deepEqual(await ledgerDays(w.store.c, m), ['20260506']);
    assert.deepEqual((await paymentIdsOfOrder(w.store.c, m, 'shared-order')).sort(), ids([first[1]!, second[0]!]));
    const index = await w.store.c.ledger.findOne({ _id: ledgerIds.minute(m, minute) });
    assert.deepEqual([...(index?.writers ?? [])].sort(), ['batch-a', 'batch-b']);
    const page = await w.store.c.ledger.findOne({ _id: ledgerIds.writerPage(m, minute, 'batch-a') });
    assert.equal(page?.lines?.length, 2, 'the retry added nothing to the page');
  });

  it('reads a minute page an earlier release wrote whole beside the pages of writers since', async function () {
    const m = newId();
    const at = new Date('2026-05-06T09:10:11.000Z');
    const minute = minuteKey(at);
    const old = line(m, at, 'batch-old');
    const { merchantId: _m, ...oldLine } = old;
    await w.store.c.ledger.insertOne({ _id: ledgerIds.page(m, minute), merchantId: m, lines: [canonicalLine(oldLine)] });
    await w.store.c.ledger.insertOne({ _id: ledgerIds.day(m, '20260506'), merchantId: m, minutes: [minute] });
    await w.store.c.ledger.insertOne({ _id: ledgerIds.merchant(m), merchantId: m, days: ['20260506'] });
    const later = line(m, new Date(at.getTime() + 5000), 'batch-new');
    await recordLedgerLines(w.store.c, 'batch-new', [later]);
    assert.deepEqual(ids(await ledgerPage(w.store.c, m, minute)), ids([old, later]));
    assert.deepEqual(await ledgerMinutes(w.store.c, m, '20260506'), [minute]);
  });

  it('adds a new minute and a new day to their indexes though this process wrote the merchant before', async function () {
    const m = newId();
    const at = new Date('2026-05-07T23:59:30.000Z');
    await recordLedgerLines(w.store.c, 'batch-1', [line(m, at, 'batch-1')]);
    await recordLedgerLines(w.store.c, 'batch-2', [line(m, at, 'batch-2')]);
    const nextDay = new Date('2026-05-08T00:00:10.000Z');
    await recordLedgerLines(w.store.c, 'batch-3', [line(m, nextDay, 'batch-3')]);
    assert.deepEqual(await ledgerDays(w.store.c, m), ['20260508', '20260507']);
    assert.deepEqual(await ledgerMinutes(w.store.c, m, '20260508'), [minuteKey(nextDay)]);
    assert.equal((await ledgerPage(w.store.c, m, minuteKey(at))).length, 2);
  });
});
