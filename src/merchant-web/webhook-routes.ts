import Router from '@koa/router';
import { z } from 'zod';
import { PERMISSIONS } from '../auth/permissions.js';
import { listDeliveries } from '../webhooks/deliveries.js';
import { WebhookEndpointBodySchema, WebhookEndpointUpdateSchema } from '../webhooks/endpoint-schemas.js';
import { createEndpoint, endpointView, listEndpoints, ownEndpoint, removeEndpoint, rotateEndpointSecret, updateEndpointEvents } from '../webhooks/endpoints.js';
import { resendDelivery, sendTestEvent } from '../webhooks/send-now.js';
import { actionCaller, pageCaller } from './console-auth.js';
import type { MerchantWebDeps } from './deps.js';
import { parseFields } from './form.js';
import { href, sendPage } from './layout.js';
import { endpointPage, secretPage, webhooksPage } from './webhooks-page.js';

const DeliveriesQuery = z.strictObject({ after: z.string().max(64).optional() });
const endpointPath = (id: string) => `/merchant/webhooks/${encodeURIComponent(id)}`;
/** The form's fields for the shared schemas: no csrf, and no events list when no box was ticked (then the schema's own rule speaks). */
const fields = (form: Record<string, string | string[]>, keep: readonly string[]) => Object.fromEntries(Object.entries(form).filter(([k]) => keep.includes(k)));

/** Webhook endpoints, their subscriptions and delivery log, through the services the REST routes call. */
export function webhookRouter(deps: MerchantWebDeps): Router {
  const router = new Router({ prefix: '/merchant/webhooks' });

  router.get('/', async (ctx) => {
    const caller = await pageCaller(deps, ctx, PERMISSIONS.settleRead);
    sendPage(ctx, webhooksPage(caller, (await listEndpoints(deps, caller.principal.merchantId)).data));
  });

  router.post('/', async (ctx) => {
    const caller = await actionCaller(deps, ctx, PERMISSIONS.settleCreate, 'capture');
    const body = parseFields(WebhookEndpointBodySchema, fields(caller.form, ['url', 'events']));
    const made = await createEndpoint(deps, caller.principal.merchantId, body.url, body.events);
    sendPage(ctx, secretPage(caller, made.endpoint, made.secret, 'created'), null, 201);
  });

  router.get('/:id', async (ctx) => {
    const caller = await pageCaller(deps, ctx, PERMISSIONS.settleRead);
    const q = parseFields(DeliveriesQuery, ctx.query, 'The query is invalid; see fields.');
    const merchantId = caller.principal.merchantId;
    const endpoint = endpointView(await ownEndpoint(deps, merchantId, ctx.params.id ?? ''));
    const page = await listDeliveries(deps, merchantId, endpoint.id, { limit: 25, ...(q.after ? { startingAfter: q.after } : {}) });
    const older = page.has_more ? href(endpointPath(endpoint.id), { after: page.data.at(-1)!.id }) : null;
    sendPage(ctx, endpointPage(caller, endpoint, page.data, older));
  });

  router.post('/:id/events', async (ctx) => {
    const caller = await actionCaller(deps, ctx, PERMISSIONS.settleCreate, 'capture');
    const body = parseFields(WebhookEndpointUpdateSchema, { events: caller.form.events ?? [] });
    await updateEndpointEvents(deps, caller.principal.merchantId, ctx.params.id ?? '', body.events);
    ctx.status = 303;
    ctx.redirect(endpointPath(ctx.params.id ?? ''));
  });

  router.post('/:id/test', async (ctx) => {
    const caller = await actionCaller(deps, ctx, PERMISSIONS.settleCreate, 'capture');
    await sendTestEvent(deps, caller.principal.merchantId, ctx.params.id ?? '');
    ctx.status = 303;
    ctx.redirect(endpointPath(ctx.params.id ?? ''));
  });

  router.post('/:id/deliveries/:deliveryId/resend', async (ctx) => {
    const caller = await actionCaller(deps, ctx, PERMISSIONS.settleCreate, 'capture');
    await resendDelivery(deps, caller.principal.merchantId, ctx.params.id ?? '', ctx.params.deliveryId ?? '');
    ctx.status = 303;
    ctx.redirect(endpointPath(ctx.params.id ?? ''));
  });

  router.post('/:id/rotate-secret', async (ctx) => {
    const caller = await actionCaller(deps, ctx, PERMISSIONS.settleCreate, 'capture');
    const rotated = await rotateEndpointSecret(deps, caller.principal.merchantId, ctx.params.id ?? '');
    sendPage(ctx, secretPage(caller, rotated.endpoint, rotated.secret, 'rotated'));
  });

  router.post('/:id/delete', async (ctx) => {
    const caller = await actionCaller(deps, ctx, PERMISSIONS.settleCreate, 'capture');
    await removeEndpoint(deps, caller.principal.merchantId, ctx.params.id ?? '');
    ctx.status = 303;
    ctx.redirect('/merchant/webhooks');
  });

  return router;
}
