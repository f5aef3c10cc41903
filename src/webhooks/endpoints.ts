import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../domain/webhook-events.js';
import type { WebhookDeps } from './deps.js';
import { ApiError } from '../domain/errors.js';
import { newId } from '@credit-facilitator/wire/ids';
import type { WebhookEndpointDoc } from '../store/documents.js';
import { deleteWebhookEndpoint, findWebhookEndpoint, insertWebhookEndpoint, replaceWebhookEvents, replaceWebhookSecrets, webhookEndpointsOf } from '../store/webhook-endpoints.js';
import { SecretBox } from '../store/secret-box.js';
import { newWebhookSecret } from './secrets.js';
import { assertAllowedDestination, endpointUrlProblem, webhookDestinationPolicy } from './url-policy.js';

export const MAX_ENDPOINTS_PER_MERCHANT = 10;
/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

type Deps = Pick<WebhookDeps, 'store' | 'env' | 'nowMs'>;

export interface EndpointView {
  id: string;
  url: string;
  createdAt: string;
  /** When the newest secret was made. */
  secretCreatedAt: string;
  /** The payment events it receives. */
  events: readonly WebhookEventType[];
}

export function endpointView(d: WebhookEndpointDoc): EndpointView {
  return { id: d._id, url: d.url, createdAt: d.createdAt.toISOString(), secretCreatedAt: d.secrets[0]!.createdAt.toISOString(), events: d.events ?? WEBHOOK_EVENT_TYPES };
}

/** Subscriptions in the one order the API shows them; every event type is stored as no filter at all. */
function subscriptions(events: readonly WebhookEventType[] | undefined): WebhookEventType[] | undefined {
  if (!events) return undefined;
  const chosen = WEBHOOK_EVENT_TYPES.filter((t) => events.includes(t));
  return chosen.length === WEBHOOK_EVENT_TYPES.length ? undefined : chosen;
}

async function checkUrl(deps: Deps, url: string): Promise<void> {
  const policy = webhookDestinationPolicy(deps.env);
  const problem = endpointUrlProblem(url, policy);
  if (problem) throw ApiError.invalidRequest([{ path: 'url', message: problem }]);
  try {
    await assertAllowedDestination(url, policy);
  } catch {
    const message = !policy.allowLoopback
      ? 'must resolve to a public address'
      : new URL(url).protocol === 'http:'
        ? 'an http endpoint must resolve to loopback only (development mode)'
        : 'must resolve to a public or (development mode) loopback address';
    throw ApiError.invalidRequest([{ path: 'url', message }]);
  }
}

/**
 * Registers an HTTPS endpoint (in development mode also a loopback http one) for the merchant,
 * subscribed to `events` (absent: all); the secret is in this answer only.
 */
export async function createEndpoint(deps: Deps, merchantId: string, url: string, events?: readonly WebhookEventType[]): Promise<{ endpoint: EndpointView; secret: string }> {
  await checkUrl(deps, url);
  if ((await webhookEndpointsOf(deps.store.c, merchantId)).length >= MAX_ENDPOINTS_PER_MERCHANT) {
    throw ApiError.invalidRequest([{ path: 'url', message: `at most ${MAX_ENDPOINTS_PER_MERCHANT} endpoints per merchant` }]);
  }
  const now = new Date(deps.nowMs());
  const secret = newWebhookSecret();
  const sealed = SecretBox.of(deps.env).seal(secret);
  const chosen = subscriptions(events);
  const doc: WebhookEndpointDoc = {
    _id: `we_${newId().replace(/-/g, '')}`,
    merchantId,
    url: new URL(url).href,
    secrets: [{ secret: sealed, createdAt: now }],
    createdAt: now,
    ...(chosen ? { events: chosen } : {}),
  };
  await insertWebhookEndpoint(deps.store.c, doc);
  return { endpoint: endpointView(doc), secret };
}

export async function listEndpoints(deps: Deps, merchantId: string): Promise<{ object: 'list'; data: EndpointView[] }> {
  const docs = await webhookEndpointsOf(deps.store.c, merchantId);
  return { object: 'list', data: docs.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()).map(endpointView) };
}

/** The merchant's endpoint of this id; another merchant's is not found, as one that does not exist. */
export async function ownEndpoint(deps: Pick<Deps, 'store'>, merchantId: string, id: string): Promise<WebhookEndpointDoc> {
  const doc = /^we_[0-9a-f]{32}$/.test(id) ? await findWebhookEndpoint(deps.store.c, id) : null;
  if (!doc || doc.merchantId !== merchantId) throw ApiError.notFound('webhook endpoint');
  return doc;
}

/** A new secret, shown once; the previous one keeps signing for ROTATION_OVERLAP_MS. */
export async function rotateEndpointSecret(deps: Deps, merchantId: string, id: string): Promise<{ endpoint: EndpointView; secret: string }> {
  const doc = await ownEndpoint(deps, merchantId, id);
  const now = new Date(deps.nowMs());
  const secret = newWebhookSecret();
  const previous = doc.secrets.filter((s) => !s.expiresAt || s.expiresAt > now).slice(0, 1).map((s) => ({ ...s, expiresAt: new Date(now.getTime() + ROTATION_OVERLAP_MS) }));
  const secrets = [{ secret: SecretBox.of(deps.env).seal(secret), createdAt: now }, ...previous];
  await replaceWebhookSecrets(deps.store.c, doc._id, secrets);
  return { endpoint: endpointView({ ...doc, secrets }), secret };
}

/** Changes which payment events the endpoint receives; deliveries already started are unchanged. */
export async function updateEndpointEvents(deps: Deps, merchantId: string, id: string, events: readonly WebhookEventType[]): Promise<EndpointView> {
  const doc = await ownEndpoint(deps, merchantId, id);
  const chosen = subscriptions(events);
  await replaceWebhookEvents(deps.store.c, doc._id, chosen);
  const { events: _previous, ...rest } = doc;
  return endpointView(chosen ? { ...rest, events: chosen } : rest);
}

export async function removeEndpoint(deps: Deps, merchantId: string, id: string): Promise<{ id: string; deleted: true }> {
  const doc = await ownEndpoint(deps, merchantId, id);
  await deleteWebhookEndpoint(deps.store.c, merchantId, doc._id);
  return { id: doc._id, deleted: true };
}
