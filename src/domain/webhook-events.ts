import type { PaymentOutcome, Receipt } from './payment.js';
import type { RefundView } from './refunds.js';

export const WEBHOOK_EVENT_TYPES = ['payment.confirmed', 'payment.failed', 'payment.voided', 'payment.refunded'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What a merchant's endpoint receives (Standard Webhooks: `type`, `timestamp`, `data`). */
export interface WebhookEvent {
  /** Stable across retries and redeliveries: the receiver deduplicates on it (`webhook-id`). */
  id: string;
  type: WebhookEventType;
  /** ISO 8601: when the payment reached the state (block time for confirmed). */
  timestamp: string;
  /** The payment's receipt; for payment.refunded it lists every refund and names the one that succeeded in `refund`. */
  data: Receipt & { refund?: RefundView };
}

export function eventTypeOf(o: PaymentOutcome): Exclude<WebhookEventType, 'payment.refunded'> {
  return o.status === 'CONFIRMED' ? 'payment.confirmed' : o.status === 'FAILED' ? 'payment.failed' : 'payment.voided';
}

/** One event per payment and type, whoever emits it and however often. */
export function webhookEventId(paymentId: string, type: WebhookEventType): string {
  return `evt_${paymentId.replace(/-/g, '')}_${type.split('.')[1]}`;
}

export function webhookEvent(receipt: Receipt, o: PaymentOutcome): WebhookEvent {
  const type = eventTypeOf(o);
  const timestamp = o.status === 'CONFIRMED' ? o.confirmedAt : o.status === 'VOIDED' ? o.voidedAt : (receipt.capturedAt ?? new Date(0).toISOString());
  return { id: webhookEventId(receipt.paymentId, type), type, timestamp, data: receipt };
}

/** payment.refunded, once per refund: the event id names the refund. */
export function refundedEvent(receipt: Receipt, refund: RefundView, at: string): WebhookEvent {
  return { id: `evt_${receipt.paymentId.replace(/-/g, '')}_refunded_${refund.refundId.replace(/-/g, '')}`, type: 'payment.refunded', timestamp: at, data: { ...receipt, refund } };
}
