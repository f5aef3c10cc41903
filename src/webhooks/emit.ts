import type { Client } from '@temporalio/client';
import { isSubscribed, type WebhookEvent } from '../domain/webhook-events.js';
import type { Collections } from '../store/collections.js';
import { webhookEndpointsFor } from '../store/webhook-endpoints.js';
import type { WebhookDeliveryInput } from '../temporal/webhook-definitions.js';
import { startDeliveryWorkflow } from './start-delivery.js';

export const DEFAULT_WEBHOOK_RETRY: WebhookDeliveryInput['retry'] = { initialMs: 5_000, maxMs: 3_600_000 };

/** One event for the merchant it belongs to. */
export interface MerchantEvent {
  merchantId: string;
  event: WebhookEvent;
}

export interface EmitDeps {
  c: Collections;
  temporal: Client;
  taskQueue: string;
  retry: WebhookDeliveryInput['retry'];
}

/**
 * Starts one delivery workflow per endpoint of the merchants these payments belong to, keyed by
 * endpoint and `key` (the batch id or `void-<paymentId>`): a repeated call starts nothing new.
 * An endpoint gets only the events it subscribed to; one subscribed to none of them, no workflow.
 * Merchants without endpoints cost one store read for the whole batch.
 */
export async function emitWebhookEvents(deps: EmitDeps, key: string, events: readonly MerchantEvent[]): Promise<number> {
  const byMerchant = new Map<string, WebhookEvent[]>();
  for (const { merchantId, event } of events) {
    const list = byMerchant.get(merchantId) ?? [];
    if (list.length === 0) byMerchant.set(merchantId, list);
    list.push(event);
  }
  return deliverWebhookEvents(deps, key, byMerchant);
}

/** Starts the delivery of each merchant's events to each of its endpoints (those it subscribed to), once per endpoint and `key`. */
export async function deliverWebhookEvents(deps: EmitDeps, key: string, byMerchant: ReadonlyMap<string, WebhookEvent[]>): Promise<number> {
  const endpoints = await webhookEndpointsFor(deps.c, [...byMerchant.keys()]);
  let started = 0;
  for (const [merchantId, list] of endpoints) {
    const events = byMerchant.get(merchantId) ?? [];
    if (events.length === 0) continue;
    for (const endpoint of list) {
      const subscribed = events.filter((e) => isSubscribed(endpoint.events, e));
      if (subscribed.length === 0) continue;
      const input: WebhookDeliveryInput = { endpointId: endpoint._id, events: subscribed, retry: deps.retry };
      if (await startDeliveryWorkflow(deps.temporal, deps.taskQueue, `webhook-${endpoint._id}-${key}`, merchantId, input)) started++;
    }
  }
  return started;
}
