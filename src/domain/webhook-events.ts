import type { PaymentOutcome, Receipt } from './payment.js';
import type { RefundView } from './refunds.js';

export const WEBHOOK_EVENT_TYPES = ['payment.confirmed', 'payment.failed', 'payment.voided', 'payment.refunded'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent on request (POST …/webhook-endpoints/{id}/test) to every endpoint whatever its subscriptions. */
export const WEBHOOK_TEST_EVENT_TYPE = 'webhook.test';

/** A payment event as a merchant's endpoint receives it (Standard Webhooks: `type`, `timestamp`, `data`). */
export interface PaymentWebhookEvent {
  /** Stable across retries and redeliveries: the receiver deduplicates on it (`webhook-id`). */
  id: string;
  type: WebhookEventType;
  /** ISO 8601: when the payment reached the state (block time for confirmed). */
  timestamp: string;
  /** The payment's receipt; for payment.refunded it lists every refund and names the one that succeeded in `refund`. */
  data: Receipt & { refund?: RefundView };
}

/** The test event: no payment behind it, and its data says so. */
export interface TestWebhookEvent {
  id: string;
  type: typeof WEBHOOK_TEST_EVENT_TYPE;
  timestamp: string;
  data: { test: true; endpointId: string; message: string };
}

export type WebhookEvent = PaymentWebhookEvent | TestWebhookEvent;

export function testWebhookEvent(id: string, endpointId: string, at: Date): TestWebhookEvent {
  return {
    id,
    type: WEBHOOK_TEST_EVENT_TYPE,
    timestamp: at.toISOString(),
    data: { test: true, endpointId, message: 'A test event sent on request: no payment is behind it.' },
  };
}

/** Whether an endpoint subscribed to `events` (absent: every payment event) gets this event; a test event goes to every endpoint. */
export function isSubscribed(events: readonly WebhookEventType[] | undefined, event: WebhookEvent): boolean {
  return event.type === WEBHOOK_TEST_EVENT_TYPE || !events || events.includes(event.type);
}

export function eventTypeOf(o: PaymentOutcome): Exclude<WebhookEventType, 'payment.refunded'> {
  return o.status === 'CONFIRMED' ? 'payment.confirmed' : o.status === 'FAILED' ? 'payment.failed' : 'payment.voided';
}

/** One event per payment and type, whoever emits it and however often. */
export function webhookEventId(paymentId: string, type: WebhookEventType): string {
  return `evt_${paymentId.replace(/-/g, '')}_${type.split('.')[1]}`;
}

export function webhookEvent(receipt: Receipt, o: PaymentOutcome): PaymentWebhookEvent {
  const type = eventTypeOf(o);
  const timestamp = o.status === 'CONFIRMED' ? o.confirmedAt : o.status === 'VOIDED' ? o.voidedAt : (receipt.capturedAt ?? new Date(0).toISOString());
  return { id: webhookEventId(receipt.paymentId, type), type, timestamp, data: receipt };
}

/** payment.refunded, once per refund: the event id names the refund. */
export function refundedEvent(receipt: Receipt, refund: RefundView, at: string): PaymentWebhookEvent {
  return { id: `evt_${receipt.paymentId.replace(/-/g, '')}_refunded_${refund.refundId.replace(/-/g, '')}`, type: 'payment.refunded', timestamp: at, data: { ...receipt, refund } };
}
