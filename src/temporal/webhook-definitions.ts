import type { WebhookEvent } from '../domain/webhook-events.js';

/** One webhook delivery workflow's input: the events for one merchant endpoint. */
export interface WebhookDeliveryInput {
  endpointId: string;
  /** In the order they happened (a batch's payments, or one void). */
  events: WebhookEvent[];
  retry: { initialMs: number; maxMs: number };
}
