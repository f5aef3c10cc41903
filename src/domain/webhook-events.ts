import type { PaymentOutcome, Receipt } from './payment.js';

export const WEBHOOK_EVENT_TYPES = ['payment.confirmed', 'payment.failed', 'payment.voided'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What a merchant's endpoint receives (Standard Webhooks: `type`, `timestamp`, `data`). */
export interface WebhookEvent {
  /** Stable across retries and redeliveries: the receiver deduplicates on it (`webhook-id`). */
  id: string;
  type: WebhookEventType;
  /** ISO 8601: when the payment reached the state (block time for confirmed). */
  timestamp: string;
  data: Receipt;
}

export function eventTypeOf(o: PaymentOutcome): WebhookEventType {
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
