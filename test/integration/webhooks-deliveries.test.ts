import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, type ApiResponse, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';
import { freePort } from '../../tools/stack/processes.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { Receiver, testCertificates } from '../helpers/webhook-receiver.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhook-events.js';

interface Delivery {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  attempts: number;
  outcome: 'pending' | 'delivered' | 'failed';
  lastStatusCode?: number;
  lastLatencyMs?: number;
  nextRetryAt?: string;
  resendOf?: string;
}

async function until<T>(what: string, ms: number, get: () => Promise<T> | T, ok: (v: T) => boolean = Boolean): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The one error shape, with a field naming what was wrong. */
function assertInvalid(res: ApiResponse, path: RegExp, what: string): void {
  assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.json)}`);
  assert.equal(res.json.error.code, 'INVALID_REQUEST', what);
  assert.match(res.json.error.requestId, /^req_/, what);
  assert.equal(typeof res.json.error.message, 'string', what);
  assert.ok((res.json.error.fields as { path: string }[]).some((f) => path.test(f.path)), `${what}: ${JSON.stringify(res.json.error.fields)}`);
}

const certDir = mkdtempSync(join(tmpdir(), 'cf-webhook-log-tls-'));
const tls = testCertificates(certDir);

describe('webhooks one can test and trust: subscriptions, the test event, the delivery log and resend', function () {
  this.timeout(300_000);
  // Batches of two on one shard with a long window: a lone payment stays unclaimed, so it can be voided.
  const env = useIsolatedStack({
    env: {
      SETTLEMENT_SHARDS: '1',
      BATCH_MAX_PAYMENTS: '2',
      BATCH_MAX_WAIT_MS: '600000',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_INITIAL_MS: '500',
      WEBHOOK_RETRY_MAX_MS: '2000',
      NODE_EXTRA_CA_CERTS: tls.ca,
    },
  });
  let w: World;
  let m: TestMerchant;
  let b: TestBorrower;
  let stranger: TestMerchant;
  let receiver: Receiver;
  const all = { id: '', secret: '' };
  const voidedOnly = { id: '', secret: '' };

  before(async function () {
    w = env().world;
    [m, b, stranger] = await Promise.all([newMerchant(w, 'Webhook log merchant', { rateLimits: UNTHROTTLED }), newBorrower(w), newMerchant(w, 'Webhook log stranger')]);
    receiver = new Receiver(tls, await freePort());
    await receiver.start();
  });

  after(async function () {
    await receiver?.stop();
    rmSync(certDir, { recursive: true, force: true });
  });

  const hooks = (id: string) => `/facilitator/webhook-endpoints/${id}`;
  const deliveries = async (id: string, query = ''): Promise<{ data: Delivery[]; has_more: boolean }> => {
    const res = await call(w, 'GET', `${hooks(id)}/deliveries${query}`, { token: m.apiKey });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json as { data: Delivery[]; has_more: boolean };
  };

  async function pay(amount: string): Promise<string> {
    const v = await newVoucher(w, m, b, amount);
    const res = await capture(w, m, v.captureBody, v.idempotencyKey);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.receipt.paymentId as string;
  }

  it('subscribes an endpoint to some events (default all) and refuses bad input with the one error shape', async function () {
    const url = `https://127.0.0.1:${receiver.port}/hooks`;
    const everything = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url } });
    assert.equal(everything.status, 201, JSON.stringify(everything.json));
    assert.deepEqual(everything.json.endpoint.events, [...WEBHOOK_EVENT_TYPES]);
    Object.assign(all, { id: everything.json.endpoint.id, secret: everything.json.secret });

    const made = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url: `${url}/voided`, events: ['payment.confirmed', 'payment.refunded'] } });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    assert.deepEqual(made.json.endpoint.events, ['payment.confirmed', 'payment.refunded']);
    Object.assign(voidedOnly, { id: made.json.endpoint.id, secret: made.json.secret });
    const updated = await call(w, 'PATCH', hooks(voidedOnly.id), { token: m.apiKey, body: { events: ['payment.voided'] } });
    assert.equal(updated.status, 200, JSON.stringify(updated.json));
    assert.deepEqual(updated.json.events, ['payment.voided']);
    const listed = (await call(w, 'GET', '/facilitator/webhook-endpoints', { token: m.apiKey })).json.data as { id: string; events: string[] }[];
    assert.deepEqual(listed.find((e) => e.id === voidedOnly.id)?.events, ['payment.voided']);
    receiver.secrets = [all.secret, voidedOnly.secret];

    for (const events of [['payment.settled'], [], ['payment.voided', 'payment.voided'], 'payment.voided', [1]]) {
      assertInvalid(await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url, events } }), /^events/, `create with events ${JSON.stringify(events)}`);
      assertInvalid(await call(w, 'PATCH', hooks(all.id), { token: m.apiKey, body: { events } }), /^events/, `update with events ${JSON.stringify(events)}`);
    }
    assertInvalid(await call(w, 'PATCH', hooks(all.id), { token: m.apiKey, body: {} }), /^events/, 'update without events');
    assertInvalid(await call(w, 'PATCH', hooks(all.id), { token: m.apiKey, body: { events: ['payment.voided'], url } }), /\(body\)|url/, 'update of the url');
    for (const query of ['?limit=0', '?limit=101', '?limit=x', '?status=delivered', `?starting_after=whd_${'0'.repeat(32)}`, '?starting_after=nonsense']) {
      const res = await call(w, 'GET', `${hooks(all.id)}/deliveries${query}`, { token: m.apiKey });
      assertInvalid(res, /limit|status|starting_after|\(body\)/, `deliveries${query}`);
    }
  });

  it('delivers only subscribed events: the payment.voided-only endpoint gets no payment.confirmed', async function () {
    const confirmed = [await pay('1100'), await pay('1200')];
    for (const id of confirmed) await pollUntil(w, m, id, 'CONFIRMED');
    const of = (secret: string) => receiver.accepted.filter((r) => r.secret === secret);
    await until('the confirmed events', 60_000, () => of(all.secret).length >= 2);
    const cancelled = await pay('1300');
    const voided = await call(w, 'POST', `/facilitator/payments/${cancelled}/void`, { token: m.apiKey, idempotencyKey: randomUUID() });
    assert.equal(voided.status, 200, JSON.stringify(voided.json));

    await until('both endpoints got their events', 60_000, () => of(all.secret).length >= 3 && of(voidedOnly.secret).length >= 1);
    await new Promise((r) => setTimeout(r, 3000)); // a delivery that should not happen would have by now
    assert.deepEqual(of(voidedOnly.secret).map((r) => [r.type, r.paymentId]), [['payment.voided', cancelled]]);
    assert.deepEqual(of(all.secret).map((r) => r.type).sort(), ['payment.confirmed', 'payment.confirmed', 'payment.voided']);

    const onlyVoided = await deliveries(voidedOnly.id);
    assert.deepEqual(onlyVoided.data.map((d) => [d.eventType, d.outcome]), [['payment.voided', 'delivered']]);
    const everything = await until('the log of every delivery', 10_000, () => deliveries(all.id), (l) => l.data.length === 3 && l.data.every((d) => d.outcome === 'delivered'));
    assert.equal(everything.data[0]!.eventType, 'payment.voided', 'newest first');
    for (const d of everything.data) {
      assert.equal(d.endpointId, all.id);
      assert.equal(d.attempts, 1);
      assert.equal(d.lastStatusCode, 204);
      assert.equal(typeof d.lastLatencyMs, 'number');
      assert.equal(d.nextRetryAt, undefined);
    }
  });

  it('sends a signed test event through the delivery workflow; the log shows its failed attempts, then the delivery', async function () {
    receiver.answer = 503;
    const sent = await call(w, 'POST', `${hooks(all.id)}/test`, { token: m.apiKey });
    assert.equal(sent.status, 202, JSON.stringify(sent.json));
    const delivery = sent.json as Delivery;
    assert.match(delivery.id, /^whd_[0-9a-f]{32}$/);
    assert.equal(delivery.eventType, 'webhook.test');
    assert.equal((await deliveries(all.id)).data[0]!.id, delivery.id, 'in the log at once, newest first');

    const failing = await until('two failed attempts', 30_000, async () => (await deliveries(all.id)).data.find((d) => d.id === delivery.id)!, (d) => d.attempts >= 2);
    assert.equal(failing.outcome, 'pending');
    assert.equal(failing.lastStatusCode, 503);
    assert.ok(failing.nextRetryAt && Date.parse(failing.nextRetryAt) > Date.now() - 5000, JSON.stringify(failing));

    receiver.answer = 204;
    const got = (await until('the test event', 30_000, () => receiver.accepted.find((r) => r.id === delivery.eventId)))!;
    assert.equal(got.type, 'webhook.test');
    assert.equal(got.secret, all.secret, "verified with the endpoint's own secret");
    assert.equal(got.data.test, true);
    assert.equal(got.data.endpointId, all.id);
    const done = await until('the delivered test event in the log', 10_000, async () => (await deliveries(all.id)).data.find((d) => d.id === delivery.id)!, (d) => d.outcome === 'delivered');
    assert.equal(done.lastStatusCode, 204);
    assert.ok(done.attempts >= 3, JSON.stringify(done));
    assert.equal(done.nextRetryAt, undefined);
  });

  it('resends a delivery as a new delivery of the same event id, and pages the log', async function () {
    const log = await deliveries(all.id);
    const original = log.data.find((d) => d.eventType === 'payment.voided')!;
    const resent = await call(w, 'POST', `${hooks(all.id)}/deliveries/${original.id}/resend`, { token: m.apiKey });
    assert.equal(resent.status, 202, JSON.stringify(resent.json));
    assert.notEqual(resent.json.id, original.id);
    assert.equal(resent.json.eventId, original.eventId);
    assert.equal(resent.json.resendOf, original.id);
    await until('the event again', 30_000, () => receiver.accepted.filter((r) => r.id === original.eventId).length === 2);
    const after = await until('the resend delivered', 10_000, () => deliveries(all.id), (l) => l.data[0]?.id === resent.json.id && l.data[0]?.outcome === 'delivered');
    assert.equal(after.data[0]!.attempts, 1);

    const first = await deliveries(all.id, '?limit=2');
    assert.equal(first.has_more, true);
    const rest = await deliveries(all.id, `?limit=100&starting_after=${first.data[1]!.id}`);
    assert.equal(rest.has_more, false);
    assert.deepEqual([...first.data, ...rest.data].map((d) => d.id), (await deliveries(all.id, '?limit=100')).data.map((d) => d.id));
    assert.equal(first.data.length + rest.data.length, 5, 'two confirmed, one voided, the test, the resend');
  });

  it("answers 404 to another merchant on the endpoint's deliveries, test, resend and update", async function () {
    const original = (await deliveries(all.id)).data[0]!;
    const asStranger = (method: string, path: string, body?: unknown) => call(w, method, path, { token: stranger.apiKey, ...(body ? { body } : {}) });
    for (const [method, path, body] of [
      ['GET', `${hooks(all.id)}/deliveries`],
      ['POST', `${hooks(all.id)}/test`],
      ['POST', `${hooks(all.id)}/deliveries/${original.id}/resend`],
      ['PATCH', hooks(all.id), { events: ['payment.failed'] }],
    ] as const) {
      const res = await asStranger(method, path, body);
      assert.equal(res.status, 404, `${method} ${path}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.code, 'NOT_FOUND');
      assert.match(res.json.error.requestId, /^req_/);
    }
    // Its own endpoint does not open the door to another endpoint's delivery either.
    const own = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: stranger.apiKey, body: { url: `https://127.0.0.1:${receiver.port}/stranger` } });
    assert.equal(own.status, 201);
    assert.equal((await asStranger('POST', `${hooks(own.json.endpoint.id)}/deliveries/${original.id}/resend`)).status, 404);
    assert.equal((await call(w, 'POST', `${hooks(all.id)}/deliveries/whd_${'0'.repeat(32)}/resend`, { token: m.apiKey })).status, 404);
    assert.deepEqual((await asStranger('GET', `${hooks(own.json.endpoint.id)}/deliveries`)).json.data, []);
    assert.equal((await deliveries(all.id)).data[0]!.id, original.id, "the stranger's requests sent nothing");
  });
});
