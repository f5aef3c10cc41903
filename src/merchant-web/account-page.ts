import type { RatePolicy } from '../domain/rate-limit.js';
import { escapeHtml } from '../http/html.js';
import type { ConsoleCaller } from './console-auth.js';
import { consolePage, time } from './layout.js';

export interface ApiKeyRow {
  keyId: string;
  prefix: string;
  createdAt: string;
  lastUsedAt?: string;
  revokedAt?: string;
}

export interface AccountView {
  limits: { verify: RatePolicy & { source: string }; capture: RatePolicy & { source: string } };
  keys: readonly ApiKeyRow[];
}

/** Who is signed in, what they may do, the merchant's limits and its API keys with their last use. */
export function accountPage(caller: ConsoleCaller, v: AccountView): string {
  const p = caller.principal;
  const limit = (name: string, l: AccountView['limits']['verify']) =>
    `<tr class="limit" data-limit="${name}"><td>${name}</td><td>${l.perMinute}/min</td><td>${l.burst}</td><td>${escapeHtml(l.source)}</td></tr>`;
  const keys = v.keys
    .map(
      (k) => `<tr class="api-key" data-key-id="${escapeHtml(k.keyId)}"><td class="mono">${escapeHtml(k.prefix)}…</td><td class="mono">${escapeHtml(k.keyId)}</td><td>${time(k.createdAt)}</td>
<td class="last-used">${k.lastUsedAt ? time(k.lastUsedAt) : 'never'}</td><td>${k.revokedAt ? `revoked ${time(k.revokedAt)}` : 'live'}</td></tr>`,
    )
    .join('');
  return consolePage(
    'Account',
    `<h1>Account</h1>
<dl id="merchant">
<dt>Merchant</dt><dd>${escapeHtml(p.merchantName ?? '')} <span class="mono muted" id="merchant-id">${escapeHtml(p.merchantId)}</span></dd>
<dt>Payout address</dt><dd class="mono">${escapeHtml(p.payoutAddress)}</dd>
<dt>Signed in as</dt><dd class="mono">${escapeHtml(p.subject)}</dd>
<dt>Permissions</dt><dd id="permissions">${escapeHtml(p.permissions.join(' ') || 'none')}</dd>
<dt>Step-up (MFA)</dt><dd id="step-up-state">${p.steppedUp ? 'yes, within the last 10 minutes' : 'no: voids, refunds and webhook changes will ask you to sign in again with MFA'}</dd>
</dl>
<h2>Rate limits</h2>
<p class="muted">Shared with your REST calls: reads count against verify, changes against capture.</p>
<table id="limits"><thead><tr><th>Bucket</th><th>Rate</th><th>Burst</th><th>Set by</th></tr></thead><tbody>${limit('verify', v.limits.verify)}${limit('capture', v.limits.capture)}</tbody></table>
<h2>API keys</h2>
<p class="muted">Last use is recorded to the minute. Keys are issued, rotated and revoked by your operator.</p>
${v.keys.length ? `<table id="api-keys"><thead><tr><th>Prefix</th><th>Key id</th><th>Created</th><th>Last used</th><th>State</th></tr></thead><tbody>${keys}</tbody></table>` : '<p class="muted">No API key.</p>'}`,
    caller,
  );
}
