import Router from '@koa/router';
import { decodeJwt } from 'jose';
import { z } from 'zod';
import { authenticateMerchant } from '../auth/merchant-auth.js';
import { looksLikeApiKey } from '../auth/api-keys.js';
import { ApiError } from '../domain/errors.js';
import { fromOwnOrigin } from '../http/same-origin.js';
import { consumeRate } from '../store/rate-limits.js';
import type { MerchantWebDeps } from './deps.js';
import { parseFields, readForm } from './form.js';
import { sendPage } from './layout.js';
import { csrfMatches, endSession, readSession, startSession } from './session.js';
import { signInPage } from './sign-in-page.js';

/** Where to go after signing in: a console path only (never another site). */
const NextPath = z
  .string()
  .max(2048)
  .regex(/^\/merchant(\/[^\s\\]*)?(\?[^\s\\]*)?$/, 'a /merchant path')
  .refine((p) => !p.startsWith('//'), 'a /merchant path')
  .optional()
  .catch(undefined);

const SignInQuery = z.object({ next: NextPath, step_up: z.string().optional() });
const SignInForm = z.strictObject({ token: z.string().trim().min(1, 'paste your token').max(4096), next: z.string().optional() });

/** Sign-in attempts per source address and minute: tokens are verified with a signature check each. */
const SIGN_IN_POLICY = { perMinute: 30, burst: 30 };

export function signInRouter(deps: MerchantWebDeps): Router {
  const router = new Router({ prefix: '/merchant' });

  router.get('/', (ctx) => {
    ctx.redirect('/merchant/payments');
  });

  router.get('/sign-in', (ctx) => {
    const q = SignInQuery.safeParse(ctx.query);
    const next = (q.success && q.data.next) || '/merchant/payments';
    sendPage(ctx, signInPage({ next, stepUp: q.success && q.data.step_up !== undefined, issuer: deps.env.MERCHANT_JWT_ISSUER ?? '(not configured)', devTools: deps.env.DEV_TOOLS }));
  });

  router.post('/sign-in', async (ctx) => {
    const judged = fromOwnOrigin(deps.env, ctx);
    if (!judged.ok) throw new ApiError('FORBIDDEN', 'Sign in from the merchant console page itself.');
    const limit = await consumeRate(deps.store.c, `merchant-console-signin:${ctx.ip}`, SIGN_IN_POLICY, deps.nowMs());
    if (!limit.allowed) throw ApiError.rateLimited(limit.retryAfterSeconds);
    const form = parseFields(SignInForm, await readForm(ctx));
    if (looksLikeApiKey(form.token)) throw new ApiError('INVALID_REQUEST', 'API keys are for servers: sign in with the user token your identity provider issued.');
    const principal = await authenticateMerchant(deps.store.c, deps.verifyJwt, `Bearer ${form.token}`, Math.floor(deps.nowMs() / 1000), deps.merchantCache);
    if (!principal || principal.credential !== 'jwt') {
      throw ApiError.unauthenticated('That token did not verify: it is expired, from another issuer or audience, malformed, or its merchant is not active. Sign in with your identity provider again.');
    }
    const exp = decodeJwt(form.token).exp;
    if (typeof exp !== 'number') throw ApiError.unauthenticated('That token has no expiry.');
    await endSession(deps, ctx, await readSession(deps, ctx));
    await startSession(deps, ctx, form.token, exp);
    deps.logger.info('merchant user signed in to the console', { merchantId: principal.merchantId, subject: principal.subject, steppedUp: principal.steppedUp });
    ctx.status = 303;
    ctx.redirect(NextPath.parse(form.next) ?? '/merchant/payments');
  });

  router.post('/sign-out', async (ctx) => {
    const judged = fromOwnOrigin(deps.env, ctx);
    if (!judged.ok) throw new ApiError('FORBIDDEN', 'Sign out from the merchant console page itself.');
    const form = await readForm(ctx);
    const session = await readSession(deps, ctx);
    if (session && !csrfMatches(session, typeof form.csrf === 'string' ? form.csrf : undefined)) {
      throw new ApiError('FORBIDDEN', 'This form carries no valid CSRF token for your session: reload the page and send it again.', { extra: { reason: 'csrf' } });
    }
    await endSession(deps, ctx, session);
    ctx.status = 303;
    ctx.redirect('/merchant/sign-in');
  });

  return router;
}
