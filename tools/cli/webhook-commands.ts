import { ApiError } from '../../src/domain/errors.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../src/domain/webhook-events.js';
import { isUuid } from '@credit-facilitator/wire/ids';
import { findMerchant } from '../../src/store/merchants.js';
import { createEndpoint, listEndpoints, removeEndpoint, rotateEndpointSecret } from '../../src/webhooks/endpoints.js';
import type { CliContext } from './context.js';
import { UsageError } from './output.js';

async function merchantOf(ctx: CliContext, merchant: string | undefined): Promise<string> {
  if (!merchant || !isUuid(merchant)) throw new UsageError('--merchant <merchantId> is required');
  const id = merchant.toLowerCase();
  if (!(await findMerchant(ctx.store.c, id))) throw new UsageError(`no merchant ${id}: list them with "merchant list"`);
  return id;
}

const deps = (ctx: CliContext) => ({ store: ctx.store, env: ctx.env, nowMs: Date.now });

function endpointFlag(endpoint: string | undefined): string {
  if (!endpoint) throw new UsageError('--endpoint <we_…> is required: list them with "webhook list"');
  return endpoint;
}

/** `--events a,b` as event types; absent, every one. */
function eventsFlag(events: string | undefined): WebhookEventType[] | undefined {
  if (events === undefined) return undefined;
  const list = events.split(',').map((e) => e.trim()).filter(Boolean);
  const unknown = list.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (list.length === 0 || unknown.length) throw new UsageError(`--events takes a comma-separated list of ${WEBHOOK_EVENT_TYPES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
  return [...new Set(list)] as WebhookEventType[];
}

export async function webhookAdd(ctx: CliContext, f: { merchant?: string; url?: string; events?: string }) {
  if (!f.url) throw new UsageError('--url <https URL> is required');
  const events = eventsFlag(f.events);
  const merchantId = await merchantOf(ctx, f.merchant);
  try {
    const { endpoint, secret } = await createEndpoint(deps(ctx), merchantId, f.url, events);
    return { ...endpoint, events: endpoint.events.join(' '), secret };
  } catch (err) {
    const fields = err instanceof ApiError ? (err.extra?.fields as { path: string; message: string }[] | undefined) : undefined;
    if (fields) throw new UsageError(fields.map((x) => `--${x.path} ${x.message}`).join('; '));
    throw err;
  }
}

export async function webhookList(ctx: CliContext, f: { merchant?: string }) {
  return (await listEndpoints(deps(ctx), await merchantOf(ctx, f.merchant))).data.map((e) => ({ ...e, events: e.events.join(' ') }));
}

export async function webhookRotate(ctx: CliContext, f: { merchant?: string; endpoint?: string }) {
  const { endpoint, secret } = await rotateEndpointSecret(deps(ctx), await merchantOf(ctx, f.merchant), endpointFlag(f.endpoint));
  return { id: endpoint.id, url: endpoint.url, secret };
}

export async function webhookRemove(ctx: CliContext, f: { merchant?: string; endpoint?: string }) {
  return removeEndpoint(deps(ctx), await merchantOf(ctx, f.merchant), endpointFlag(f.endpoint));
}
