import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { prepareVouchers, newParties } from '../helpers/captures.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { until } from '../helpers/until.js';
import { call, pollUntil } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';

/**
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, one capture can be followed from the merchant's trace to its
 * settleBatch transaction: the route continues the merchant's traceparent, the payment workflow's
 * spans join that trace, and the batch that settled it links back to it, with the transaction hash.
 */
describe('traces: a capture from the route to the transaction hash (OTLP/HTTP JSON)', function () {
  this.timeout(300_000);
  let receiver: OtlpReceiver;
  // Filled in before the stack's own before hook reads it (hooks run in the order they are declared).
  const stackEnv: Record<string, string> = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', SETTLEMENT_SHARDS: '1', BATCH_MAX_WAIT_MS: '300' };
  before(async function () {
    receiver = await startOtlpReceiver();
    stackEnv.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  });
  const env = useIsolatedStack({ env: stackEnv });
  after(async () => receiver?.close());

  it('continues the merchant trace through the payment workflow, and the batch span links to it with the tx hash', async function () {
    const w = env().world;
    const parties = await newParties(w, 'Traced merchant');
    const [prepared] = await prepareVouchers(w, parties, [4242n]);
    const traceId = randomBytes(16).toString('hex');
    const merchantSpanId = randomBytes(8).toString('hex');
    const res = await call(w, 'POST', '/facilitator/capture', {
      token: parties.merchant.apiKey,
      body: prepared!.voucher.captureBody,
      idempotencyKey: prepared!.voucher.idempotencyKey,
      headers: { traceparent: `00-${traceId}-${merchantSpanId}-01` },
    });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const paymentId = res.json.receipt.paymentId as string;
    const confirmed = await pollUntil(w, parties.merchant, paymentId, 'CONFIRMED', 120_000);
    const tx = confirmed.transaction as string;
    assert.match(tx, /^0x[0-9a-f]{64}$/);

    const find = (what: string, ok: (s: ReceivedSpan) => boolean) =>
      until(what, async () => receiver.spans.filter(ok), (found) => found.length > 0, 60_000).then((found) => found[0]!);
    const inTrace = (s: ReceivedSpan) => s.traceId === traceId;

    // The merchant's trace: route, capture, the workflow start, the workflow run and its outcome signal.
    const route = await find('the capture route span', (s) => inTrace(s) && s.name === 'POST /api/v1/facilitator/capture');
    assert.equal(route.parentSpanId, merchantSpanId, 'the route span is a child of the merchant span');
    assert.equal(route.service, 'credit-facilitator-api');
    assert.equal(route.attributes['x402.payment.id'], paymentId);
    assert.equal(route.attributes['http.response.status_code'], 200);
    const capture = await find('the capture span', (s) => inTrace(s) && s.name === 'capture' && s.parentSpanId === route.spanId);
    assert.equal(capture.attributes['x402.payment.id'], paymentId);
    await find('the payment workflow start', (s) => inTrace(s) && s.name === 'StartWorkflow:paymentWorkflowV2');
    const run = await find('the payment workflow run', (s) => inTrace(s) && s.name === 'RunWorkflow:paymentWorkflowV2');
    assert.equal(run.service, 'credit-facilitator-worker');
    const notify = await find('the outcome notice in the payment trace', (s) => inTrace(s) && s.name === 'settlement.notify_payment');
    assert.equal(notify.parentSpanId, capture.spanId);
    await find('the outcome signal handled by the payment workflow', (s) => inTrace(s) && s.name === 'HandleSignal:paymentSettled');

    // The batch: its own trace (the shard workflow's), linked to the capture span, carrying the transaction hash.
    const linksCapture = (s: ReceivedSpan) => s.links.some((l) => l.traceId === traceId && l.spanId === capture.spanId);
    const submit = await find('the batch submit span', (s) => s.name === 'settlement.batch.submit' && s.attributes['chain.tx.hash'] === tx);
    assert.ok(linksCapture(submit), `the submit span links to the capture: ${JSON.stringify(submit.links)}`);
    assert.notEqual(submit.traceId, traceId, 'the batch runs in its shard workflow trace');
    const activity = await find('the submit activity', (s) => s.spanId === submit.parentSpanId);
    assert.equal(activity.name, 'RunActivity:submitShardBatch');
    const chainCall = await find('the settleBatch chain call', (s) => s.name === 'chain settleBatch' && s.parentSpanId === submit.spanId);
    assert.equal(chainCall.attributes['chain.tx.hash'], tx);
    const gather = await find('the batch gather span', (s) => s.name === 'settlement.batch.gather' && linksCapture(s));
    assert.equal(gather.attributes['x402.batch.payments'], 1);
    const confirm = await find('the batch confirm span', (s) => s.name === 'settlement.batch.confirm' && linksCapture(s));
    assert.equal(confirm.attributes['chain.tx.hash'], tx);
    assert.equal(confirm.attributes['x402.batch.result'], 'confirmed');
  });
});
