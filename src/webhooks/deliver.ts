import { Webhook } from 'standardwebhooks';
import type { WebhookEvent } from '../domain/webhook-events.js';
import type { WebhookEndpointDoc } from '../store/documents.js';
import type { SecretBox } from '../store/secret-box.js';
import { assertPublicDestination } from './url-policy.js';

export class WebhookRefusedError extends Error {}

/** The body the endpoint receives: the event without its id (the id travels as `webhook-id`). */
export function webhookBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}

/**
 * POSTs one event, signed per Standard Webhooks with every secret still active (one signature
 * each, space-separated, so a receiver mid-rotation verifies with either). A 2xx is delivered;
 * anything else throws and the workflow retries with backoff. Redirects are not followed.
 */
export async function deliverWebhookEvent(
  endpoint: WebhookEndpointDoc,
  event: WebhookEvent,
  opts: { allowPrivate: boolean; secrets: Pick<SecretBox, 'open'>; now?: Date },
): Promise<number> {
  await assertPublicDestination(endpoint.url, opts.allowPrivate);
  const now = opts.now ?? new Date();
  const active = endpoint.secrets.filter((s) => !s.expiresAt || s.expiresAt > now);
  if (active.length === 0) throw new WebhookRefusedError('the endpoint has no active secret');
  const body = webhookBody(event);
  const signature = active.map((s) => new Webhook(opts.secrets.open(s.secret)).sign(event.id, now, body)).join(' ');
  const res = await fetch(endpoint.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'credit-facilitator-webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    },
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  await res.body?.cancel().catch(() => undefined);
  if (res.status < 200 || res.status >= 300) throw new Error(`webhook endpoint answered ${res.status}`);
  return res.status;
}
