import assert from 'node:assert/strict';
import { attemptRecord } from '../../src/webhooks/attempt-record.js';
import { isSubscribed, testWebhookEvent } from '../../src/domain/webhook-events.js';
import { webhookDeliveryId } from '../../src/webhooks/delivery-id.js';

describe('webhooks: what the delivery log keeps of an attempt', function () {
  const at = new Date('2026-11-28T12:00:00.000Z');
  const retry = { initialMs: 5_000, coefficient: 2, maxMs: 3_600_000, deadlineMs: at.getTime() + 3 * 24 * 3600_000 };

  it('a failed attempt is pending until Temporal retries it, with its backoff', function () {
    const r = attemptRecord({ attempt: 3, at, latencyMs: 12.4, statusCode: 503, error: 'webhook endpoint answered 503', delivered: false, refused: false, retry });
    assert.deepEqual(r, { attempts: 3, lastAttemptAt: at, lastStatusCode: 503, lastLatencyMs: 12, lastError: 'webhook endpoint answered 503', outcome: 'pending', nextRetryAt: new Date(at.getTime() + 20_000) });
    assert.equal(attemptRecord({ attempt: 30, at, latencyMs: 1, delivered: false, refused: false, retry }).nextRetryAt?.getTime(), at.getTime() + 3_600_000, 'capped at the maximum interval');
  });

  it('delivered, refused, or past the deadline: no next retry', function () {
    assert.equal(attemptRecord({ attempt: 1, at, latencyMs: 5, statusCode: 204, delivered: true, refused: false, retry }).outcome, 'delivered');
    const refused = attemptRecord({ attempt: 1, at, latencyMs: 0, error: 'x'.repeat(500), delivered: false, refused: true, retry });
    assert.deepEqual([refused.outcome, refused.nextRetryAt, refused.lastError?.length], ['failed', undefined, 200]);
    const late = attemptRecord({ attempt: 2, at, latencyMs: 0, delivered: false, refused: false, retry: { ...retry, deadlineMs: at.getTime() + 1_000 } });
    assert.deepEqual([late.outcome, late.nextRetryAt], ['failed', undefined]);
  });

  it('subscriptions filter payment events, never the test event; delivery ids follow workflow and event', function () {
    const test = testWebhookEvent('evt_test_1', 'we_1', at);
    assert.equal(isSubscribed(['payment.voided'], test), true);
    assert.equal(isSubscribed(['payment.voided'], { ...test, type: 'payment.confirmed' } as never), false);
    assert.equal(isSubscribed(undefined, { ...test, type: 'payment.confirmed' } as never), true);
    assert.equal(webhookDeliveryId('wf', 'evt'), webhookDeliveryId('wf', 'evt'));
    assert.notEqual(webhookDeliveryId('wf-resend', 'evt'), webhookDeliveryId('wf', 'evt'));
    assert.match(webhookDeliveryId('wf', 'evt'), /^whd_[0-9a-f]{32}$/);
  });
});
