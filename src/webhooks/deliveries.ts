import { ApiError } from '../domain/errors.js';
import { findWebhookDelivery, webhookDeliveryPage } from '../store/webhook-deliveries.js';
import type { WebhookDeliveryDoc } from '../store/documents.js';
import type { WebhookDeps } from './deps.js';
import { WEBHOOK_DELIVERY_ID } from './delivery-id.js';
import { deliveryView, type DeliveryView } from './delivery-log.js';
import { ownEndpoint } from './endpoints.js';

type Deps = Pick<WebhookDeps, 'store'>;

export interface DeliveryListQuery {
  limit: number;
  startingAfter?: string;
}

/** A delivery to this endpoint; anything else (another endpoint's, another merchant's, none) is not found. */
export async function deliveryOf(deps: Deps, endpointId: string, deliveryId: string): Promise<WebhookDeliveryDoc | null> {
  const doc = WEBHOOK_DELIVERY_ID.test(deliveryId) ? await findWebhookDelivery(deps.store.c, deliveryId) : null;
  return doc && doc.endpointId === endpointId ? doc : null;
}

/** An endpoint's deliveries, newest first, a page at a time (limit / starting_after / has_more, as payments). */
export async function listDeliveries(deps: Deps, merchantId: string, endpointId: string, q: DeliveryListQuery): Promise<{ object: 'list'; data: DeliveryView[]; has_more: boolean }> {
  const endpoint = await ownEndpoint(deps, merchantId, endpointId);
  let below: number | undefined;
  if (q.startingAfter !== undefined) {
    const after = await deliveryOf(deps, endpoint._id, q.startingAfter);
    if (!after) throw ApiError.invalidRequest([{ path: 'starting_after', message: 'no delivery to this endpoint has this id' }], 'The query is invalid; see fields.');
    below = after.seq;
  }
  const page = await webhookDeliveryPage(deps.store.c, endpoint._id, q.limit, below);
  return { object: 'list', data: page.deliveries.map(deliveryView), has_more: page.hasMore };
}
