import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { call, capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';
import { freePort } from '../../tools/stack/processes.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { refund, refundUntil, signedRefund } from '../helpers/refunds.js';
import { webhookAdd, webhookList, webhookRemove, webhookRotate } from '../../tools/cli/webhook-commands.js';
import { Receiver, testCertificates } from '../helpers/webhook-receiver.js';

async function until(what: string, ms: number, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const certDir = mkdtempSync(join(tmpdir(), 'cf-webhook-tls-'));
const tls = testCertificates(certDir);

describe('webhooks: signed settlement events to a merchant endpoint that goes down and comes back', function () {
  this.timeout(300_000);
  // Batches of two on one shard with a long window: a lone payment stays unclaimed, so it can be voided.
  const env = useIsolatedStack({
    env: {
      SETTLEMENT_SHARDS: '1',
      BATCH_MAX_PAYMENTS: '2',
      BATCH_MAX_WAIT_MS: '600000',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_INITIAL_MS: '500',
      WEBHOOK_RETRY_MAX_MS: '4000',
      NODE_EXTRA_CA_CERTS: tls.ca,
    },
  });
  let w: World;
  let m: TestMerchant;
  let b: TestBorrower;
  let receiver: Receiver;
  let endpointId: string;

  before(async function () {
    w = env().world;
    [m, b] = await Promise.all([newMerchant(w, 'Webhook merchant', { rateLimits: UNTHROTTLED }), newBorrower(w)]);
    receiver = new Receiver(tls, await freePort());
    await receiver.start();
  });

  after(async function () {
    await receiver?.stop();
    rmSync(certDir, { recursive: true, force: true });
  });

  async function pay(amount: string): Promise<string> {
    const v = await newVoucher(w, m, b, amount);
    const res = await capture(w, m, v.captureBody, v.idempotencyKey);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.receipt.paymentId as string;
  }

  it('registers an https endpoint and shows its secret once; refuses http and a bad body', async function () {
    const res = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url: `https://127.0.0.1:${receiver.port}/hooks` } });
    assert.equal(res.status, 201, JSON.stringify(res.json));
    assert.match(res.json.secret, /^whsec_/);
    endpointId = res.json.endpoint.id;
    receiver.secrets = [res.json.secret];
    const stored = await w.store.c.webhookEndpoints.findOne({ _id: endpointId });
    assert.match(stored!.secrets[0]!.secret, /^enc:v1:/, 'the signing secret is sealed at rest');
    assert.ok(!JSON.stringify(stored).includes(res.json.secret.slice(6)), 'the store never holds the secret in clear');
    const listed = await call(w, 'GET', '/facilitator/webhook-endpoints', { token: m.apiKey });
    assert.deepEqual(listed.json.data.map((e: { id: string }) => e.id), [endpointId]);
    assert.ok(!JSON.stringify(listed.json).includes('whsec_'), 'a listing never shows a secret');
    for (const body of [{ url: `http://127.0.0.1:${receiver.port}/hooks` }, { url: 'not a url' }, { url: 'https://x.test', extra: 1 }, {}]) {
      const bad = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body });
      assert.equal(bad.status, 400, JSON.stringify(bad.json));
      assert.equal(bad.json.error.code, 'INVALID_REQUEST');
    }
    const stranger = await newMerchant(w, 'Webhook stranger');
    assert.equal((await call(w, 'POST', `/facilitator/webhook-endpoints/${endpointId}/rotate-secret`, { token: stranger.apiKey })).status, 404);
    assert.equal((await call(w, 'DELETE', `/facilitator/webhook-endpoints/${endpointId}`, { token: stranger.apiKey })).status, 404);
  });

  it('delivers payment.confirmed, then everything missed while the endpoint was down, each once by id with a valid signature', async function () {
    const first = [await pay('1100'), await pay('1200')];
    for (const id of first) await pollUntil(w, m, id, 'CONFIRMED');
    await until('two confirmed events', 30_000, () => receiver.uniqueIds().size >= 2);

    await receiver.stop();
    const missed = [await pay('1300'), await pay('1400')];
    for (const id of missed) await pollUntil(w, m, id, 'CONFIRMED');
    const cancelled = await pay('1500');
    const voided = await call(w, 'POST', `/facilitator/payments/${cancelled}/void`, { token: m.apiKey, idempotencyKey: randomUUID() });
    assert.equal(voided.status, 200, JSON.stringify(voided.json));
    const refunded = await refund(w, m, first[0]!, await signedRefund(w, m, first[0]!, '400'));
    assert.equal(refunded.status, 202, JSON.stringify(refunded.json));
    await refundUntil(w, m, first[0]!, refunded.json.refund.refundId, 'SUCCEEDED');
    await new Promise((r) => setTimeout(r, 10_000)); // down for a while: deliveries fail and back off
    assert.equal(receiver.uniqueIds().size, 2);
    await receiver.start();

    await until('every missed event', 60_000, () => receiver.uniqueIds().size >= 6);
    assert.equal(receiver.rejected, 0, 'every delivery carried a valid signature');
    const of = (type: string) => new Map(receiver.accepted.filter((r) => r.type === type).map((r) => [r.paymentId, r]));
    for (const id of [...first, ...missed]) assert.ok(of('payment.confirmed').has(id), `payment.confirmed for ${id}`);
    assert.equal(of('payment.voided').get(cancelled)?.status, 'VOIDED');
    assert.equal(of('payment.refunded').get(first[0]!)?.status, 'CONFIRMED', 'a refunded payment stays CONFIRMED');
    assert.equal(of('payment.refunded').get(first[0]!)?.id, `evt_${first[0]!.replace(/-/g, '')}_refunded_${(refunded.json.refund.refundId as string).replace(/-/g, '')}`);
    assert.equal(receiver.uniqueIds().size, 6, 'one event per payment and refund, whatever was retried');

    const batchId = (await pollUntil(w, m, missed[0]!, 'CONFIRMED')).batchId as string;
    const run = await w.temporal.workflow.getHandle(`webhook-${endpointId}-${batchId}`).describe();
    assert.equal(run.status.name, 'COMPLETED', 'the delivery is a workflow an operator can see');
  });

  it('lets the operator add, list, rotate and remove an endpoint from the CLI', async function () {
    const added = await webhookAdd(w.cli, { merchant: m.merchantId, url: `https://127.0.0.1:${receiver.port}/cli` });
    assert.match(added.secret, /^whsec_/);
    assert.ok((await webhookList(w.cli, { merchant: m.merchantId })).some((e) => e.id === added.id));
    const rotated = await webhookRotate(w.cli, { merchant: m.merchantId, endpoint: added.id });
    assert.notEqual(rotated.secret, added.secret);
    await webhookRemove(w.cli, { merchant: m.merchantId, endpoint: added.id });
    assert.ok(!(await webhookList(w.cli, { merchant: m.merchantId })).some((e) => e.id === added.id));
    await assert.rejects(webhookAdd(w.cli, { merchant: m.merchantId, url: `http://127.0.0.1:${receiver.port}/cli` }), /--url must be https/);
  });

  it('signs with the new secret after a rotation (the old one keeps working for a day)', async function () {
    const rotated = await call(w, 'POST', `/facilitator/webhook-endpoints/${endpointId}/rotate-secret`, { token: m.apiKey });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
    const old = receiver.secrets[0]!;
    receiver.secrets = [rotated.json.secret];
    const before = receiver.uniqueIds().size;
    for (const id of [await pay('1600'), await pay('1700')]) await pollUntil(w, m, id, 'CONFIRMED');
    await until('events signed with the new secret', 30_000, () => receiver.uniqueIds().size >= before + 2);
    assert.equal(receiver.rejected, 0);
    const last = receiver.accepted.at(-1)!;
    assert.ok(last.id.startsWith('evt_'));
    receiver.secrets = [old];
    const deleted = await call(w, 'DELETE', `/facilitator/webhook-endpoints/${endpointId}`, { token: m.apiKey });
    assert.equal(deleted.status, 200);
    assert.deepEqual((await call(w, 'GET', '/facilitator/webhook-endpoints', { token: m.apiKey })).json.data, []);
  });
});
