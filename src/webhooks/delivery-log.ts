import type { WebhookEvent } from '../domain/webhook-events.js';
import type { Collections } from '../store/collections.js';
import type { WebhookDeliveryDoc, WebhookEndpointDoc } from '../store/documents.js';
import { openWebhookDelivery, recordWebhookAttempt } from '../store/webhook-deliveries.js';
import { webhookDeliveryId } from './delivery-id.js';

/** The delivery of `event` by workflow `workflowId` to `endpoint`, recorded as pending if it is new. */
export function openDelivery(c: Collections, endpoint: WebhookEndpointDoc, workflowId: string, event: WebhookEvent, now: Date, resendOf?: string): Promise<WebhookDeliveryDoc> {
  return openWebhookDelivery(c, {
    _id: webhookDeliveryId(workflowId, event.id),
    endpointId: endpoint._id,
    merchantId: endpoint.merchantId,
    event,
    createdAt: now,
    attempts: 0,
    outcome: 'pending',
    ...(resendOf ? { resendOf } : {}),
  });
}

export const recordAttempt = recordWebhookAttempt;

export interface DeliveryView {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  createdAt: string;
  attempts: number;
  outcome: WebhookDeliveryDoc['outcome'];
  lastAttemptAt?: string;
  lastStatusCode?: number;
  lastLatencyMs?: number;
  lastError?: string;
  nextRetryAt?: string;
  resendOf?: string;
}

export function deliveryView(d: WebhookDeliveryDoc): DeliveryView {
  return {
    id: d._id,
    endpointId: d.endpointId,
    eventId: d.event.id,
    eventType: d.event.type,
    createdAt: d.createdAt.toISOString(),
    attempts: d.attempts,
    outcome: d.outcome,
    ...(d.lastAttemptAt ? { lastAttemptAt: d.lastAttemptAt.toISOString() } : {}),
    ...(d.lastStatusCode !== undefined ? { lastStatusCode: d.lastStatusCode } : {}),
    ...(d.lastLatencyMs !== undefined ? { lastLatencyMs: d.lastLatencyMs } : {}),
    ...(d.lastError ? { lastError: d.lastError } : {}),
    ...(d.nextRetryAt ? { nextRetryAt: d.nextRetryAt.toISOString() } : {}),
    ...(d.resendOf ? { resendOf: d.resendOf } : {}),
  };
}
