import assert from 'node:assert/strict';
import { metricSum } from '../helpers/metrics.js';
import { until } from '../helpers/until.js';
import { capture, newBorrower, newMerchant, newVoucher, pollUntil, world } from '../helpers/world.js';

describe('worker /metrics', function () {
  this.timeout(90_000);

  it("shows batch size, settle latency, gas, settled payments and the batch end's steps moving with a settlement", async () => {
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
    assert.ok(metricSum(after, 'x402_payments_settled_total') > metricSum(before, 'x402_payments_settled_total'));
    assert.ok(metricSum(after, 'x402_settlement_gas_used_total') > metricSum(before, 'x402_settlement_gas_used_total'));
    assert.ok(metricSum(after, 'x402_batch_size_count') > metricSum(before, 'x402_batch_size_count'));
    assert.ok(metricSum(after, 'x402_settle_latency_seconds_count') > metricSum(before, 'x402_settle_latency_seconds_count'));
    assert.match(after, /x402_batches_total\{outcome="confirmed"/);
    // The batch end runs after the confirmation polls see: its steps are counted as each finishes, dequeue last.
    const stepsTimed = (text: string) => metricSum(text, 'x402_batch_end_step_seconds_count', 'step="dequeue"');
    const ended = await until('a batch end step timed', async () => (await fetch(url)).text(), (text) => stepsTimed(text) > stepsTimed(before), 30_000);
    for (const step of ['record', 'holds', 'ledger', 'dequeue']) assert.match(ended, new RegExp(`x402_batch_end_step_seconds_count\\{[^}]*step="${step}"`), step);
    assert.equal((await fetch(url.replace('/metrics', '/other'))).status, 404);
  });
});
