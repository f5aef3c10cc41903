import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { webhookEvent, webhookEventId } from '../../src/domain/webhook-events.js';
import { sampleReceipt } from '../helpers/sample-receipt.js';
import { assertAllowedDestination, endpointUrlProblem, PUBLIC_ONLY } from '../../src/webhooks/url-policy.js';
import { webhookBody } from '../../src/webhooks/deliver.js';
import { newWebhookSecret } from '../../src/webhooks/secrets.js';

const receipt = sampleReceipt;

describe('webhooks: URL policy, event ids and signatures', function () {
  it('accepts only https URLs without credentials or fragments', function () {
    assert.equal(endpointUrlProblem('https://hooks.example.com/x'), null);
    assert.equal(endpointUrlProblem('http://hooks.example.com/x'), 'must be https');
    assert.equal(endpointUrlProblem('https://u:p@hooks.example.com/x'), 'must not carry credentials');
    assert.equal(endpointUrlProblem('https://hooks.example.com/x#y'), 'must not have a fragment');
    assert.equal(endpointUrlProblem('nope'), 'not a URL');
    // The WHATWG parser forgives these; a registered URL must be written plainly.
    assert.equal(endpointUrlProblem('https:F/27.0.0.1:9/h'), 'must be https');
    assert.equal(endpointUrlProblem('https:/hooks.example.com/x'), 'must be https');
  });

  it('refuses loopback, private, link-local and mapped addresses unless allowed', async function () {
    for (const url of ['https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://192.168.0.1/x', 'https://172.20.0.1/x', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://[fd00::1]/x']) {
      await assert.rejects(assertAllowedDestination(url, PUBLIC_ONLY), /private or loopback/, url);
      await assertAllowedDestination(url, { allowPrivate: true, allowLoopback: false });
    }
    // A mapped address is refused even where private ones are allowed (test/unit/webhooks-embedded-ipv4.test.ts).
    await assert.rejects(assertAllowedDestination('https://[::ffff:127.0.0.1]/x', PUBLIC_ONLY), /private or loopback/);
    await assert.rejects(assertAllowedDestination('https://[::ffff:127.0.0.1]/x', { allowPrivate: true, allowLoopback: false }), /private or loopback/);
    await assertAllowedDestination('https://8.8.8.8/x', PUBLIC_ONLY);
  });

  it('gives one stable event id per payment and type', function () {
    const confirmed = webhookEvent(receipt, { status: 'CONFIRMED', batchId: 'x', transaction: '0x1', blockNumber: '1', confirmedAt: '2026-11-24T00:00:05.000Z' });
    assert.equal(confirmed.type, 'payment.confirmed');
    assert.equal(confirmed.id, webhookEventId(receipt.paymentId, 'payment.confirmed'));
    assert.equal(confirmed.timestamp, '2026-11-24T00:00:05.000Z');
    const voided = webhookEvent({ ...receipt, status: 'VOIDED' }, { status: 'VOIDED', voidedAt: '2026-11-24T00:00:01.000Z' });
    assert.notEqual(voided.id, confirmed.id);
    assert.match(voided.id, /^evt_[0-9a-f]{32}_voided$/);
  });

  it('signs so a Standard Webhooks receiver verifies with either secret during a rotation', function () {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    const event = webhookEvent(receipt, { status: 'FAILED', batchId: 'x', failureReason: 'r' });
    const body = webhookBody(event);
    const now = new Date();
    const signature = [oldSecret, newSecret].map((s) => new Webhook(s).sign(event.id, now, body)).join(' ');
    const headers = { 'webhook-id': event.id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature };
    for (const s of [oldSecret, newSecret]) assert.deepEqual(new Webhook(s).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers));
    assert.throws(() => new Webhook(newSecret).verify(body.replace('"100"', '"101"'), headers));
  });
});
