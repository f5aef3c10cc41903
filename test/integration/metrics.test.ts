import assert from 'node:assert/strict';
import { metricSum } from '../helpers/metrics.js';
import { call, capture, newBorrower, newMerchant, newVoucher, world, type World } from '../helpers/world.js';

async function scrape(w: World): Promise<string> {
  const res = await fetch(`${w.baseUrl.replace(/\/api\/v1$/, '')}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
  return res.text();
}

describe('API /metrics', function () {
  this.timeout(60_000);

  it('counts captures, rejections and verify verdicts as they happen', async () => {
    const w = await world();
    const m = await newMerchant(w);
    const b = await newBorrower(w);
    const before = await scrape(w);
    const v = await newVoucher(w, m, b, '700');
    assert.equal((await capture(w, m, v.captureBody)).status, 200);
    assert.equal((await capture(w, m, v.captureBody)).status, 422);
    const verify = await call(w, 'POST', '/facilitator/verify', { token: m.apiKey, body: { ...v.captureBody, paymentRequirements: v.paymentPayload.accepted } });
    assert.equal(verify.json.invalidReason, 'voucher_already_used');
    const after = await scrape(w);

    assert.equal(metricSum(after, 'x402_captures_total', 'outcome="queued"') - metricSum(before, 'x402_captures_total', 'outcome="queued"'), 1);
    assert.equal(
      metricSum(after, 'x402_capture_rejections_total', 'reason="voucher_already_used"') - metricSum(before, 'x402_capture_rejections_total', 'reason="voucher_already_used"'),
      1,
    );
    assert.ok(metricSum(after, 'x402_verify_results_total', 'result="voucher_already_used"') >= 1);
    assert.equal(metricSum(after, "x402_http_requests_total", `route="/api/v1/facilitator/capture",method="POST",status="422"`) - metricSum(before, "x402_http_requests_total", `route="/api/v1/facilitator/capture",method="POST",status="422"`), 1);
    assert.ok(!/sk_live_|Bearer /.test(after), 'no credential ever appears in metrics');
  });
});
