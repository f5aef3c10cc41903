import type { Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { testWebhookEvent, type WebhookEvent } from '../domain/webhook-events.js';
import { ApiError } from '../domain/errors.js';
import type { WebhookEndpointDoc } from '../store/documents.js';
import type { WebhookDeps } from './deps.js';
import { deliveryOf } from './deliveries.js';
import { deliveryView, openDelivery, type DeliveryView } from './delivery-log.js';
import { ownEndpoint } from './endpoints.js';
import { startDeliveryWorkflow } from './start-delivery.js';

/** What sending on request needs: the webhook services' dependencies and a Temporal client. */
export type SendDeps = Pick<WebhookDeps, 'store' | 'env' | 'nowMs'> & { temporal: Client };

const nonce = () => randomBytes(16).toString('hex');

/** One event to one endpoint through the delivery workflow, as settlement sends them; the delivery is in the log at once. */
async function sendOne(deps: SendDeps, endpoint: WebhookEndpointDoc, workflowId: string, event: WebhookEvent, resendOf?: string): Promise<DeliveryView> {
  const retry = { initialMs: deps.env.WEBHOOK_RETRY_INITIAL_MS, maxMs: deps.env.WEBHOOK_RETRY_MAX_MS };
  await startDeliveryWorkflow(deps.temporal, deps.env.TEMPORAL_TASK_QUEUE, workflowId, endpoint.merchantId, { endpointId: endpoint._id, events: [event], retry });
  return deliveryView(await openDelivery(deps.store.c, endpoint, workflowId, event, new Date(deps.nowMs()), resendOf));
}

/** A signed `webhook.test` event to the endpoint, whatever it subscribed to. */
export async function sendTestEvent(deps: SendDeps, merchantId: string, endpointId: string): Promise<DeliveryView> {
  const endpoint = await ownEndpoint(deps, merchantId, endpointId);
  const id = nonce();
  return sendOne(deps, endpoint, `webhook-${endpoint._id}-test-${id}`, testWebhookEvent(`evt_test_${id}`, endpoint._id, new Date(deps.nowMs())));
}

/** The delivery's event again, as a new delivery with its own attempts; the event id is the same, so the receiver deduplicates. */
export async function resendDelivery(deps: SendDeps, merchantId: string, endpointId: string, deliveryId: string): Promise<DeliveryView> {
  const endpoint = await ownEndpoint(deps, merchantId, endpointId);
  const original = await deliveryOf(deps, endpoint._id, deliveryId);
  if (!original) throw ApiError.notFound('webhook delivery');
  return sendOne(deps, endpoint, `webhook-${endpoint._id}-resend-${nonce()}`, original.event, original._id);
}
