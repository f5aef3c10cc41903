import type { lookup as dnsLookup } from 'node:dns';
import { Webhook } from 'standardwebhooks';
import type { WebhookEvent } from '../domain/webhook-events.js';
import { AddressRefused, pinnedRequest } from '../net/pinned-request.js';
import type { WebhookEndpointDoc } from '../store/documents.js';
import type { SecretBox } from '../store/secret-box.js';
import { allowedAddresses, endpointUrlProblem, type WebhookDestinationPolicy } from './url-policy.js';

export class WebhookRefusedError extends Error {}

/** The endpoint answered, but not 2xx. */
export class WebhookAnsweredError extends Error {
  constructor(readonly status: number) {
    super(`webhook endpoint answered ${status}`);
  }
}

/** The body the endpoint receives: the event without its id (the id travels as `webhook-id`). */
export function webhookBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}

/**
 * POSTs one event, signed per Standard Webhooks with every secret still active (one signature
 * each, space-separated, so a receiver mid-rotation verifies with either). A 2xx is delivered;
 * anything else throws and the workflow retries with backoff. Redirects are not followed. The
 * connection goes to an address the policy allows, resolved once by the connection itself (a DNS
 * answer that changes between check and connect cannot redirect it); a refused address or URL is a
 * WebhookRefusedError, not retried.
 */
export async function deliverWebhookEvent(
  endpoint: WebhookEndpointDoc,
  event: WebhookEvent,
  opts: WebhookDestinationPolicy & { secrets: Pick<SecretBox, 'open'>; now?: Date; resolve?: typeof dnsLookup },
): Promise<number> {
  const problem = endpointUrlProblem(endpoint.url, opts);
  if (problem) throw new WebhookRefusedError(`webhook endpoint URL ${problem}`);
  const url = new URL(endpoint.url);
  const now = opts.now ?? new Date();
  const active = endpoint.secrets.filter((s) => !s.expiresAt || s.expiresAt > now);
  if (active.length === 0) throw new WebhookRefusedError('the endpoint has no active secret');
  const body = webhookBody(event);
  const signature = active.map((s) => new Webhook(opts.secrets.open(s.secret)).sign(event.id, now, body)).join(' ');
  const res = await pinnedRequest(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'credit-facilitator-webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    },
    body,
    timeoutMs: 10_000,
    maxBytes: 0,
    allowed: allowedAddresses(url, opts),
    protocols: ['https:', 'http:'],
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
  }).catch((err: unknown) => {
    if (err instanceof AddressRefused) throw new WebhookRefusedError(`webhook endpoint refused: ${err.message}`);
    throw err;
  });
  if (res.status < 200 || res.status >= 300) throw new WebhookAnsweredError(res.status);
  return res.status;
}
