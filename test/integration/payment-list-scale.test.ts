import assert from 'node:assert/strict';
import { newId } from '@credit-facilitator/wire/ids';
import type { LedgerLine } from '../../src/domain/payment-ledger.js';
import { recordLedgerLines } from '../../src/store/payment-ledger.js';
import { call, newMerchant, UNTHROTTLED, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';

const PAYMENTS = Number(process.env.LIST_SCALE_PAYMENTS ?? 10_000);

/**
 * The list route at scale on the real store: a merchant with 10,000 finished payments (their
 * documents and ledger lines written as captures and the shards write them, 20 a minute over
 * ~8 hours, in batches of 100)
 * pages through all of them, newest first, none twice, none missing. Page latencies are printed,
 * not asserted (docs/benchmarks.md keeps the figures).
 */
describe(`payment list: paging through ${PAYMENTS} payments`, function () {
  this.timeout(600_000);
  // A stack of its own: 10,000 more payments would slow every later test that scans the shared one.
  const env = useIsolatedStack();
  let w: World;

  before(function () {
    w = env().world;
  });

  it('returns every payment once, in order, a page of 100 at a time', async function () {
    const m = await newMerchant(w, 'List scale', { rateLimits: UNTHROTTLED });
    const start = Date.now() - PAYMENTS * 3_000;
    const lines: (LedgerLine & { merchantId: string })[] = [];
    for (let i = 0; i < PAYMENTS; i++) {
      const batchId = `scale-batch-${Math.floor(i / 100)}`;
      lines.push({
        merchantId: m.merchantId,
        paymentId: newId(),
        capturedAt: new Date(start + i * 3_000).toISOString(),
        status: 'CONFIRMED',
        payer: 'scale-borrower',
        amount: String(1000 + i),
        asset: '0x0000000000000000000000000000000000000001',
        network: 'eip155:84532',
        orderRef: `scale-${i}`,
        batchId,
      });
    }
    const batches = [...new Set(lines.map((l) => l.batchId!))];
    await w.store.c.batches.insertMany(
      batches.map((id, i) => ({ _id: id, shard: 0, status: 'CONFIRMED' as const, payments: 100, transaction: `0x${String(i).padStart(64, '0')}`, blockNumber: String(100 + i), confirmedAt: new Date(), updatedAt: new Date() })),
    );
    for (let i = 0; i < lines.length; i += 100) {
      const chunk = lines.slice(i, i + 100);
      // The payments' own documents too, as captures leave them (a cursor is resolved by its payment).
      await w.store.c.payments.insertMany(
        chunk.map((l) => ({
          _id: l.paymentId, voucherId: `scale-voucher-${l.paymentId}`, spendIntentId: `scale-intent-${l.paymentId}`, merchantId: m.merchantId, borrowerId: l.payer,
          operationalAgentId: 'scale-agent', payTo: '0x0000000000000000000000000000000000000002', amount: l.amount, asset: l.asset, network: l.network, orderRef: l.orderRef,
          resource: 'https://scale.example/item', idempotencyKey: l.paymentId, status: 'CONFIRMED' as const, capturedAt: new Date(l.capturedAt), updatedAt: new Date(), batchId: l.batchId!,
        })),
      );
      await recordLedgerLines(w.store.c, chunk[0]!.batchId!, chunk);
    }

    const seen: string[] = [];
    const ms: number[] = [];
    let after: string | undefined;
    for (;;) {
      const t0 = performance.now();
      const res = await call(w, 'GET', `/facilitator/payments?limit=100${after ? `&starting_after=${after}` : ''}`, { token: m.apiKey });
      ms.push(performance.now() - t0);
      assert.equal(res.status, 200, JSON.stringify(res.json).slice(0, 300));
      seen.push(...res.json.data.map((r: { paymentId: string }) => r.paymentId));
      if (!res.json.has_more) break;
      after = res.json.data.at(-1).paymentId;
    }
    assert.equal(seen.length, PAYMENTS);
    assert.deepEqual(seen, lines.map((l) => l.paymentId).reverse());
    const sorted = [...ms].sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(1);
    console.log(`      ${ms.length} pages of 100: p50 ${pct(50)} ms, p95 ${pct(95)} ms, max ${pct(100)} ms`);

    const byOrder = await call(w, 'GET', `/facilitator/payments?orderRef=scale-${PAYMENTS - 7}`, { token: m.apiKey });
    assert.deepEqual(byOrder.json.data.map((r: { paymentId: string }) => r.paymentId), [lines[PAYMENTS - 7]!.paymentId]);
    const lastHour = await call(w, 'GET', `/facilitator/payments?limit=100&created[gte]=${new Date(Date.now() - 3600_000).toISOString()}`, { token: m.apiKey });
    assert.ok(lastHour.json.data.length > 0 && lastHour.json.data.every((r: { capturedAt: string }) => Date.parse(r.capturedAt) >= Date.now() - 3600_000 - 60_000));
  });
});
