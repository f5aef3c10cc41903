import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { refund, refundUntil, signedRefund } from '../helpers/refunds.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { call, capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, world, type ApiResponse, type World } from '../helpers/world.js';

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: { 'application/json': { schema: { $ref: string } } } }> }>>;
  components: { schemas: Record<string, object> };
};

/** Checks one real answer against what openapi.json promises for that operation and status. */
function checker(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  return (path: string, method: string, res: ApiResponse) => {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method.toUpperCase()} ${path} is documented`);
    const documented = op.responses[String(res.status)];
    assert.ok(documented, `${method.toUpperCase()} ${path} documents status ${res.status}`);
    const ref = documented.content?.['application/json'].schema.$ref;
    assert.ok(ref, `status ${res.status} documents a JSON body`);
    const name = ref.split('/').pop() as string;
    const validate = ajv.compile(doc.components.schemas[name] as object);
    assert.ok(validate(res.json), `${method.toUpperCase()} ${path} ${res.status} matches ${name}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(res.json)}`);
  };
}

describe('OpenAPI 3.1 document and the real responses', function () {
  this.timeout(120_000);
  let w: World;
  let doc: Doc;
  let check: ReturnType<typeof checker>;

  before(async () => {
    w = await world();
    const res = await call(w, 'GET', '/openapi.json');
    assert.equal(res.status, 200);
    doc = res.json as Doc;
    check = checker(doc);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    assert.equal((doc as unknown as { openapi: string }).openapi, '3.1.0');
  });

  it('public discovery and health match', async () => {
    check('/facilitator/supported', 'get', await call(w, 'GET', '/facilitator/supported'));
    check('/facilitator/health', 'get', await call(w, 'GET', '/facilitator/health'));
  });

  it('GET /me and its 401 match', async () => {
    const m = await newMerchant(w, 'OpenAPI me');
    check('/facilitator/me', 'get', await call(w, 'GET', '/facilitator/me', { token: m.apiKey }));
    check('/facilitator/me', 'get', await call(w, 'GET', '/facilitator/me', { token: 'sk_live_wrongwrongwrongwrongwrong' }));
  });

  it('verify, capture, replay, poll and their errors match', async () => {
    const m = await newMerchant(w, 'OpenAPI merchant', { rateLimits: UNTHROTTLED });
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '1250');
    const verify = await call(w, 'POST', '/facilitator/verify', {
      token: m.apiKey,
      body: { ...v.captureBody, paymentRequirements: v.paymentPayload.accepted },
    });
    check('/facilitator/verify', 'post', verify);
    assert.equal(verify.json.isValid, true);

    const key = randomUUID();
    const first = await capture(w, m, v.captureBody, key);
    check('/facilitator/capture', 'post', first);
    check('/facilitator/capture', 'post', await capture(w, m, v.captureBody, key));
    check('/facilitator/capture', 'post', await capture(w, m, { ...v.captureBody, extra: 1 }, key));

    const poll = await call(w, 'GET', `/facilitator/payments/${first.json.receipt.paymentId}`, { token: m.apiKey });
    check('/facilitator/payments/{paymentId}', 'get', poll);
    const done = await pollUntil(w, m, first.json.receipt.paymentId, 'CONFIRMED');
    check('/facilitator/payments/{paymentId}', 'get', { status: 200, headers: new Headers(), json: done });
    const held = await call(w, 'GET', `/facilitator/payments/${first.json.receipt.paymentId}`, { token: m.apiKey, headers: { prefer: 'wait=5' } });
    check('/facilitator/payments/{paymentId}', 'get', held);
    const pollOp = (doc.paths['/facilitator/payments/{paymentId}'] as unknown as Record<string, { parameters: { name: string }[]; responses: Record<string, { headers?: Record<string, unknown> }> }>).get!;
    assert.ok(pollOp.parameters.some((p) => p.name === 'Prefer'), 'the Prefer header is documented');
    assert.deepEqual(Object.keys(pollOp.responses['200']!.headers ?? {}).sort(), ['Preference-Applied', 'Retry-After']);
    assert.match(held.headers.get('preference-applied') ?? '', /^wait=[0-9]+$/);
    if (!['CONFIRMED', 'FAILED', 'VOIDED'].includes(poll.json.status)) assert.match(poll.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);

    check('/facilitator/capture', 'post', await capture(w, m, v.captureBody));
    check('/facilitator/capture', 'post', await capture(w, m, { x402Version: 2 }));
    check('/facilitator/capture', 'post', await call(w, 'POST', '/facilitator/capture', { body: v.captureBody, idempotencyKey: randomUUID() }));
    check('/facilitator/payments/{paymentId}', 'get', await call(w, 'GET', `/facilitator/payments/${randomUUID()}`, { token: m.apiKey }));

    check('/facilitator/payments', 'get', await call(w, 'GET', '/facilitator/payments?limit=2', { token: m.apiKey }));
    check('/facilitator/payments', 'get', await call(w, 'GET', '/facilitator/payments?limit=0', { token: m.apiKey }));
    check('/facilitator/batches/{batchId}', 'get', await call(w, 'GET', `/facilitator/batches/${done.batchId}`, { token: m.apiKey }));
    check('/facilitator/batches/{batchId}', 'get', await call(w, 'GET', `/facilitator/batches/${randomUUID()}`, { token: m.apiKey }));
    const voidPath = (id: string) => `/facilitator/payments/${id}/void`;
    check('/facilitator/payments/{paymentId}/void', 'post', await call(w, 'POST', voidPath(first.json.receipt.paymentId), { token: m.apiKey, idempotencyKey: randomUUID() }));
    check('/facilitator/payments/{paymentId}/void', 'post', await call(w, 'POST', voidPath(randomUUID()), { token: m.apiKey, idempotencyKey: randomUUID() }));
    check('/facilitator/payments/{paymentId}/void', 'post', await call(w, 'POST', voidPath(randomUUID()), { token: m.apiKey }));

    const paidId = first.json.receipt.paymentId as string;
    const prepPath = (id: string, q: string) => `/facilitator/payments/${id}/refund-authorization?${q}`;
    check('/facilitator/payments/{paymentId}/refund-authorization', 'get', await call(w, 'GET', prepPath(paidId, 'amount=1'), { token: m.apiKey }));
    check('/facilitator/payments/{paymentId}/refund-authorization', 'get', await call(w, 'GET', prepPath(paidId, 'amount=0'), { token: m.apiKey }));
    check('/facilitator/payments/{paymentId}/refund-authorization', 'get', await call(w, 'GET', prepPath(paidId, `amount=${10n ** 20n}`), { token: m.apiKey }));
    check('/facilitator/payments/{paymentId}/refund-authorization', 'get', await call(w, 'GET', prepPath(randomUUID(), 'amount=1'), { token: m.apiKey }));
    const refundBody = await signedRefund(w, m, paidId, '1');
    const refunded = await refund(w, m, paidId, refundBody);
    check('/facilitator/payments/{paymentId}/refunds', 'post', refunded);
    check('/facilitator/payments/{paymentId}/refunds', 'post', await refund(w, m, paidId, refundBody));
    check('/facilitator/payments/{paymentId}/refunds', 'post', await refund(w, m, paidId, { ...refundBody, signature: `0x${'11'.repeat(65)}` }));
    check('/facilitator/payments/{paymentId}/refunds', 'post', await refund(w, m, paidId, { amount: 'x' }));
    check('/facilitator/payments/{paymentId}/refunds', 'post', await refund(w, m, randomUUID(), refundBody));
    check('/facilitator/payments/{paymentId}/refunds', 'post', await call(w, 'POST', `/facilitator/payments/${paidId}/refunds`, { token: m.apiKey, body: refundBody }));
    const withRefund = await refundUntil(w, m, paidId, refunded.json.refund.refundId, 'SUCCEEDED');
    check('/facilitator/payments/{paymentId}', 'get', { status: 200, headers: new Headers(), json: withRefund });

    check('/facilitator/payments/{paymentId}/receipt', 'get', await call(w, 'GET', `/facilitator/payments/${first.json.receipt.paymentId}/receipt`, { token: m.apiKey }));
    check('/facilitator/receipt-keys', 'get', await call(w, 'GET', '/facilitator/receipt-keys'));

    const hook = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url: 'https://127.0.0.1:9/hooks' } });
    check('/facilitator/webhook-endpoints', 'post', hook);
    check('/facilitator/webhook-endpoints', 'post', await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url: 'http://x' } }));
    check('/facilitator/webhook-endpoints', 'get', await call(w, 'GET', '/facilitator/webhook-endpoints', { token: m.apiKey }));
    check('/facilitator/webhook-endpoints/{endpointId}/rotate-secret', 'post', await call(w, 'POST', `/facilitator/webhook-endpoints/${hook.json.endpoint.id}/rotate-secret`, { token: m.apiKey }));
    const hookPath = `/facilitator/webhook-endpoints/${hook.json.endpoint.id}`;
    check('/facilitator/webhook-endpoints/{endpointId}', 'patch', await call(w, 'PATCH', hookPath, { token: m.apiKey, body: { events: ['payment.voided'] } }));
    check('/facilitator/webhook-endpoints/{endpointId}', 'patch', await call(w, 'PATCH', hookPath, { token: m.apiKey, body: { events: ['payment.settled'] } }));
    const tested = await call(w, 'POST', `${hookPath}/test`, { token: m.apiKey });
    check('/facilitator/webhook-endpoints/{endpointId}/test', 'post', tested);
    check('/facilitator/webhook-endpoints/{endpointId}/deliveries', 'get', await call(w, 'GET', `${hookPath}/deliveries`, { token: m.apiKey }));
    check('/facilitator/webhook-endpoints/{endpointId}/deliveries', 'get', await call(w, 'GET', `${hookPath}/deliveries?limit=0`, { token: m.apiKey }));
    check('/facilitator/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/resend', 'post', await call(w, 'POST', `${hookPath}/deliveries/${tested.json.id}/resend`, { token: m.apiKey }));
    check('/facilitator/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/resend', 'post', await call(w, 'POST', `${hookPath}/deliveries/whd_0/resend`, { token: m.apiKey }));
    check('/facilitator/webhook-endpoints/{endpointId}', 'delete', await call(w, 'DELETE', `/facilitator/webhook-endpoints/${hook.json.endpoint.id}`, { token: m.apiKey }));
    check('/facilitator/webhook-endpoints/{endpointId}', 'delete', await call(w, 'DELETE', `/facilitator/webhook-endpoints/${hook.json.endpoint.id}`, { token: m.apiKey }));
  });
});
