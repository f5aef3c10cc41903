import type { Context } from 'koa';
import { escapeHtml, page, sendHtml } from '../http/html.js';
import type { ConsoleCaller } from './console-auth.js';

/** Wider than the borrower pages: the console shows tables. */
const CONSOLE_STYLE = `
  main { max-width: 64rem; }
  nav { display: flex; flex-wrap: wrap; gap: .2rem 1rem; align-items: center; margin-bottom: 1rem; padding-bottom: .6rem; border-bottom: 1px solid color-mix(in srgb, CanvasText 20%, transparent); }
  nav form { margin: 0 0 0 auto; }
  nav a { text-decoration: none; }
  table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .92em; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid color-mix(in srgb, CanvasText 12%, transparent); vertical-align: top; }
  input, select, textarea { font: inherit; padding: .35rem .5rem; margin: .15rem .3rem .15rem 0; }
  textarea { width: 100%; box-sizing: border-box; }
  fieldset { border: 1px solid color-mix(in srgb, CanvasText 20%, transparent); border-radius: 8px; margin: .8rem 0; }
  ol.timeline li { margin: .3rem 0; }
  ol.timeline li.pending { opacity: .55; }
  .notice { padding: .6rem .8rem; border-radius: 8px; background: color-mix(in srgb, #f1c40f 18%, transparent); }
`;

export const href = (path: string, query: Record<string, string | undefined> = {}): string => {
  const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
};

export const link = (path: string, text: string, cls?: string): string => `<a href="${escapeHtml(path)}"${cls ? ` class="${cls}"` : ''}>${escapeHtml(text)}</a>`;

/** The session's CSRF token as a hidden field: every form of the console carries it. */
export const csrfField = (caller: ConsoleCaller): string => `<input type="hidden" name="csrf" value="${escapeHtml(caller.session.csrf)}">`;

/** A one-button form (void, resend, test event, sign out...). */
export function postButton(caller: ConsoleCaller, action: string, label: string, opts: { cls?: string; hidden?: Record<string, string> } = {}): string {
  const hidden = Object.entries(opts.hidden ?? {}).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('');
  return `<form method="post" action="${escapeHtml(action)}" style="display:inline">${csrfField(caller)}${hidden}<button type="submit"${opts.cls ? ` class="${opts.cls}"` : ''}>${escapeHtml(label)}</button></form>`;
}

function nav(caller: ConsoleCaller): string {
  const p = caller.principal;
  return `<nav>
<strong>${escapeHtml(p.merchantName ?? 'Merchant')}</strong>
${link('/merchant/payments', 'Payments')} ${link('/merchant/batches', 'Batches')} ${link('/merchant/webhooks', 'Webhooks')} ${link('/merchant/account', 'Account')}
<span class="muted" id="signed-in-as">${escapeHtml(p.subject)}${p.steppedUp ? ' · <span id="stepped-up">MFA</span>' : ''}</span>
${postButton(caller, '/merchant/sign-out', 'Sign out', { cls: 'sign-out' })}
</nav>`;
}

/** A console page; `caller` absent for the sign-in and error pages of a signed-out browser. */
export function consolePage(title: string, body: string, caller: ConsoleCaller | null, script?: { nonce: string; source: string }): string {
  return page(`${title} — merchant console`, `${caller ? nav(caller) : ''}${body}`, script, { referrer: 'same-origin', style: CONSOLE_STYLE });
}

/** Sends a console page: the borrower pages' CSP and headers, with forms allowed to post to this origin only. */
export function sendPage(ctx: Context, html: string, nonce: string | null = null, status = 200): void {
  sendHtml(ctx, html, nonce, status, { formAction: 'self', referrer: 'same-origin' });
}

export const time = (iso: string | undefined): string => (iso ? `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z'))}</time>` : '—');
