import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';

/** Self-contained pages: inline style and one inline script allowed by nonce, nothing external. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
  body { margin: 0; padding: 2rem 1rem; background: Canvas; color: CanvasText; }
  main { max-width: 34rem; margin: 0 auto; padding: 1.5rem; border: 1px solid color-mix(in srgb, CanvasText 20%, transparent); border-radius: 12px; }
  h1 { font-size: 1.3rem; margin-top: 0; }
  ul { padding-left: 1.2rem; }
  code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; word-break: break-all; }
  button { font: inherit; padding: .6rem 1.1rem; border-radius: 8px; border: 0; background: #2856d8; color: #fff; cursor: pointer; margin: .3rem .4rem .3rem 0; }
  button:disabled { opacity: .5; cursor: default; }
  .status { margin-top: 1rem; min-height: 1.4em; }
  .error { color: #c0392b; }
  .ok { color: #1e8449; }
  .muted { opacity: .75; font-size: .9em; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem .8rem; }
  dt { font-weight: 600; }
  dd { margin: 0; }
`;

/** How a page differs from the borrower pages' default: its referrer policy and extra style (the merchant console's forms and tables). */
export interface PageOptions {
  /** Default no-referrer. A page whose HTML forms POST needs same-origin: under no-referrer a browser sends `Origin: null` with a form. */
  referrer?: 'no-referrer' | 'same-origin';
  style?: string;
}

export function page(title: string, body: string, script?: { nonce: string; source: string }, opts: PageOptions = {}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="${opts.referrer ?? 'no-referrer'}">
<title>${escapeHtml(title)}</title>
<style>${STYLE}${opts.style ?? ''}</style>
</head>
<body>
<main>
${body}
</main>
${script ? `<script nonce="${script.nonce}">${script.source}</script>` : ''}
</body>
</html>`;
}

export function errorPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p class="error">${escapeHtml(message)}</p>`);
}

/** A JSON value safe to embed in an inline script (no closing tags, no line separators). */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** Where a page's HTML forms may post ('none': the borrower pages post with fetch only) and its referrer policy. */
export interface HtmlOptions {
  formAction?: 'none' | 'self';
  referrer?: 'no-referrer' | 'same-origin';
}

/** Sends an HTML page with a CSP that allows only its own inline script and same-origin fetches. */
export function sendHtml(ctx: Context, html: string, nonce: string | null, status = 200, opts: HtmlOptions = {}): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', opts.referrer ?? 'no-referrer');
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'unsafe-inline'; ${nonce ? `script-src 'nonce-${nonce}'; ` : ''}connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action ${opts.formAction === 'self' ? "'self'" : "'none'"}; frame-ancestors 'none'`,
  );
  ctx.body = html;
}
