import type { Context, Next } from 'koa';
import { ApiError } from '../domain/errors.js';
import { escapeHtml } from '../http/html.js';
import { isTransientDependencyError } from '../http/transient-errors.js';
import type { Logger } from '../observability/logger.js';
import { IdempotencyKeyBusy } from '../store/idempotency.js';
import { SignInNeeded } from './console-auth.js';
import { consolePage, href, sendPage } from './layout.js';

const TITLES: Partial<Record<string, string>> = {
  INVALID_REQUEST: 'That input is not valid',
  UNAUTHENTICATED: 'Sign in again',
  FORBIDDEN: 'Not allowed',
  STEP_UP_REQUIRED: 'Step-up required',
  NOT_FOUND: 'Not found',
  RATE_LIMITED: 'Too many requests',
  UNAVAILABLE: 'Try again shortly',
};

function errorBody(e: ApiError, requestId: string): string {
  const fields = Array.isArray(e.extra?.fields) ? (e.extra.fields as { path: string; message: string }[]) : [];
  const list = fields.length ? `<ul id="error-fields">${fields.map((f) => `<li><code>${escapeHtml(f.path || '(form)')}</code>: ${escapeHtml(f.message)}</li>`).join('')}</ul>` : '';
  const stepUp =
    e.code === 'STEP_UP_REQUIRED'
      ? `<p>Refunds, voids and webhook changes need a multi-factor sign-in from the last 10 minutes, as the REST API does for your user. <a id="step-up" href="/merchant/sign-in?step_up=1">Sign in again with MFA</a>, then repeat the action.</p>`
      : e.code === 'UNAUTHENTICATED'
        ? `<p><a href="/merchant/sign-in">Sign in</a></p>`
        : '';
  return `<h1>${escapeHtml(TITLES[e.code] ?? 'That did not work')}</h1>
<p class="error" id="error" data-code="${escapeHtml(e.code)}">${escapeHtml(e.message)}</p>
${list}${stepUp}
<p class="muted">Request <span class="mono" id="request-id">${escapeHtml(requestId)}</span> · <a href="/merchant/payments">Back to payments</a></p>`;
}

/**
 * The console answers every refusal with a page that says what was wrong (the REST API's codes and
 * messages, never a stack trace); a page asked for without a session goes to the sign-in page and
 * comes back after it. Only /merchant paths pass through here.
 */
export function consoleErrors(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw ApiError.notFound('page');
    } catch (err) {
      if (err instanceof SignInNeeded) {
        ctx.redirect(href('/merchant/sign-in', { next: err.returnTo }));
        ctx.set('Cache-Control', 'no-store');
        return;
      }
      const known = err instanceof ApiError ? err : err instanceof IdempotencyKeyBusy ? ApiError.idempotencyKeyInUse() : null;
      const transient = !known && isTransientDependencyError(err);
      if (transient) logger.warn('dependency unavailable', { requestId: ctx.state.requestId, path: ctx.path, error: err });
      else if (!known) logger.error('console request failed', { requestId: ctx.state.requestId, path: ctx.path, error: err });
      const e = known ?? (transient ? ApiError.unavailable(1) : ApiError.internal());
      for (const [k, v] of Object.entries(e.headers ?? {})) ctx.set(k, v);
      const requestId = String(ctx.state.requestId ?? '');
      sendPage(ctx, consolePage(TITLES[e.code] ?? 'Error', errorBody(e, requestId), null), null, e.status);
    }
  };
}
