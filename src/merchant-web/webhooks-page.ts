import { WEBHOOK_EVENT_TYPES } from '../domain/webhook-events.js';
import { escapeHtml } from '../http/html.js';
import type { DeliveryView } from '../webhooks/delivery-log.js';
import type { EndpointView } from '../webhooks/endpoints.js';
import type { ConsoleCaller } from './console-auth.js';
import { consolePage, csrfField, link, postButton, time } from './layout.js';

function eventBoxes(chosen: readonly string[]): string {
  return WEBHOOK_EVENT_TYPES.map((e) => `<label><input type="checkbox" name="events" value="${e}"${chosen.includes(e) ? ' checked' : ''}> ${e}</label>`).join(' ');
}

/** The merchant's endpoints and a form to add one. */
export function webhooksPage(caller: ConsoleCaller, endpoints: readonly EndpointView[]): string {
  const rows = endpoints
    .map((e) => `<tr class="endpoint" data-endpoint-id="${escapeHtml(e.id)}"><td>${link(`/merchant/webhooks/${e.id}`, e.url, 'mono')}</td><td>${escapeHtml(e.events.join(', '))}</td><td>${time(e.createdAt)}</td></tr>`)
    .join('');
  return consolePage(
    'Webhooks',
    `<h1>Webhooks</h1>
<p class="muted">Signed settlement events (Standard Webhooks) to your https endpoints.</p>
${endpoints.length ? `<table id="endpoints"><thead><tr><th>URL</th><th>Events</th><th>Created</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted" id="no-endpoints">No endpoint yet.</p>'}
<h2>Add an endpoint</h2>
<form method="post" action="/merchant/webhooks" id="new-endpoint">${csrfField(caller)}
<input name="url" id="endpoint-url" placeholder="https://shop.example.com/x402/webhooks" size="50" required aria-label="Endpoint URL">
<fieldset><legend>Events</legend>${eventBoxes(WEBHOOK_EVENT_TYPES)}</fieldset>
<button type="submit" id="create-endpoint">Add endpoint</button></form>`,
    caller,
  );
}

/** The one page that shows a new secret; it is never shown again. */
export function secretPage(caller: ConsoleCaller, endpoint: EndpointView, secret: string, what: 'created' | 'rotated'): string {
  return consolePage(
    'Endpoint secret',
    `<h1>${what === 'created' ? 'Endpoint added' : 'Secret rotated'}</h1>
<p>Signing secret for <span class="mono">${escapeHtml(endpoint.url)}</span>, shown once: store it with your receiver now.</p>
<p><code id="endpoint-secret">${escapeHtml(secret)}</code></p>
${what === 'rotated' ? '<p class="muted">The previous secret keeps signing beside it for 24 hours.</p>' : ''}
<p>${link(`/merchant/webhooks/${endpoint.id}`, 'Go to the endpoint', 'endpoint-link')}</p>`,
    caller,
  );
}

function deliveryRows(caller: ConsoleCaller, endpointId: string, deliveries: readonly DeliveryView[]): string {
  if (deliveries.length === 0) return '<p class="muted" id="no-deliveries">Nothing sent yet.</p>';
  const rows = deliveries
    .map(
      (d) => `<tr class="delivery" data-delivery-id="${escapeHtml(d.id)}"><td class="event-type">${escapeHtml(d.eventType)}</td><td class="mono">${escapeHtml(d.eventId)}</td><td>${time(d.createdAt)}</td>
<td class="outcome">${escapeHtml(d.outcome)}</td><td>${d.attempts}</td><td>${d.lastStatusCode ?? '—'}${d.lastLatencyMs !== undefined ? ` · ${d.lastLatencyMs} ms` : ''}${d.lastError ? ` <span class="muted">${escapeHtml(d.lastError)}</span>` : ''}</td>
<td>${time(d.nextRetryAt)}</td><td>${postButton(caller, `/merchant/webhooks/${endpointId}/deliveries/${d.id}/resend`, 'Resend', { cls: 'resend' })}</td></tr>`,
    )
    .join('');
  return `<table id="deliveries"><thead><tr><th>Event</th><th>Id</th><th>Created</th><th>Outcome</th><th>Attempts</th><th>Last answer</th><th>Next retry</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** One endpoint: its subscriptions, a test event, its secret, and the delivery log with resend. */
export function endpointPage(caller: ConsoleCaller, e: EndpointView, deliveries: readonly DeliveryView[], older: string | null): string {
  const base = `/merchant/webhooks/${e.id}`;
  return consolePage(
    'Webhook endpoint',
    `<h1>Endpoint <span class="mono">${escapeHtml(e.url)}</span></h1>
<p class="muted">${escapeHtml(e.id)} · created ${time(e.createdAt)} · secret from ${time(e.secretCreatedAt)}</p>
<form method="post" action="${base}/events" id="events-form">${csrfField(caller)}<fieldset><legend>Events it receives</legend>${eventBoxes(e.events)}</fieldset><button type="submit" id="save-events">Save events</button></form>
<p>${postButton(caller, `${base}/test`, 'Send a test event', { cls: 'send-test' })} ${postButton(caller, `${base}/rotate-secret`, 'Rotate secret', { cls: 'rotate' })} ${postButton(caller, `${base}/delete`, 'Delete endpoint', { cls: 'delete' })}</p>
<h2>Deliveries</h2>
${deliveryRows(caller, e.id, deliveries)}
${older ? `<p>${link(older, 'Older deliveries →')}</p>` : ''}`,
    caller,
  );
}
