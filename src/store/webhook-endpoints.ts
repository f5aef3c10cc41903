import type { Collections } from './collections.js';
import type { WebhookEndpointDoc } from './documents.js';

export function insertWebhookEndpoint(c: Collections, doc: WebhookEndpointDoc): Promise<unknown> {
  return c.webhookEndpoints.insertOne(doc);
}

export function findWebhookEndpoint(c: Collections, id: string): Promise<WebhookEndpointDoc | null> {
  return c.webhookEndpoints.findOne({ _id: id });
}

/** A merchant's endpoints (a small collection: one scan). */
export function webhookEndpointsOf(c: Collections, merchantId: string): Promise<WebhookEndpointDoc[]> {
  return c.webhookEndpoints.find({ merchantId }).toArray();
}

/** Every endpoint of these merchants, by merchant. */
export async function webhookEndpointsFor(c: Collections, merchantIds: readonly string[]): Promise<Map<string, WebhookEndpointDoc[]>> {
  const docs = merchantIds.length ? await c.webhookEndpoints.find({ merchantId: { $in: [...merchantIds] } }).toArray() : [];
  const out = new Map<string, WebhookEndpointDoc[]>();
  for (const d of docs) out.set(d.merchantId, [...(out.get(d.merchantId) ?? []), d]);
  return out;
}

export async function replaceWebhookSecrets(c: Collections, id: string, secrets: WebhookEndpointDoc['secrets']): Promise<void> {
  await c.webhookEndpoints.updateOne({ _id: id }, { $set: { secrets } });
}

/** Sets the endpoint's subscriptions; undefined removes the filter (every event). */
export async function replaceWebhookEvents(c: Collections, id: string, events: WebhookEndpointDoc['events']): Promise<void> {
  await c.webhookEndpoints.updateOne({ _id: id }, events ? { $set: { events } } : { $unset: { events: '' } });
}

export async function deleteWebhookEndpoint(c: Collections, merchantId: string, id: string): Promise<boolean> {
  return (await c.webhookEndpoints.deleteOne({ _id: id, merchantId })).deletedCount === 1;
}
