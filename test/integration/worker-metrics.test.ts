import assert from 'node:assert/strict';
import { capture, newBorrower, newMerchant, newVoucher, pollUntil, world } from '../helpers/world.js';

function total(text: string, name: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(name) && !l.startsWith('#'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe('worker /metrics', function () {
  this.timeout(90_000);

  it('shows batch size, settle latency, gas and settled payments moving with a settlement', async () => {
    const w = await world();
    const url = `http://127.0.0.1:${w.env.WORKER_METRICS_PORT}/metrics`;
    const before = await (await fetch(url)).text();
    const m = await newMerchant(w);
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '900');
    const res = await capture(w, m, v.captureBody);
    assert.equal(res.status, 200);
    await pollUntil(w, m, res.json.receipt.paymentId, 'CONFIRMED');
    const after = await (await fetch(url)).text();
    assert.ok(total(after, 'x402_payments_settled_total') > total(before, 'x402_payments_settled_total'));
    assert.ok(total(after, 'x402_settlement_gas_used_total') > total(before, 'x402_settlement_gas_used_total'));
    assert.ok(total(after, 'x402_batch_size_count') > total(before, 'x402_batch_size_count'));
    assert.ok(total(after, 'x402_settle_latency_seconds_count') > total(before, 'x402_settle_latency_seconds_count'));
    assert.match(after, /x402_batches_total\{outcome="confirmed"/);
    assert.equal((await fetch(url.replace('/metrics', '/other'))).status, 404);
  });
});
