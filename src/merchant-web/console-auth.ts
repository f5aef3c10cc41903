import type { Context } from 'koa';
import { authorizationRefusal } from '../auth/authorize.js';
import { authenticateMerchant } from '../auth/merchant-auth.js';
import { ratePolicyFor, type RateBucket } from '../auth/merchant-limits.js';
import type { MerchantPrincipal, Permission } from '../auth/permissions.js';
import { ApiError } from '../domain/errors.js';
import { fromOwnOrigin } from '../http/same-origin.js';
import { consumeRate } from '../store/rate-limits.js';
import type { MerchantWebDeps } from './deps.js';
import { readForm } from './form.js';
import { csrfMatches, readSession, type ConsoleSession } from './session.js';

/** A page asked for without a live session: the router sends the browser to sign in, then back. */
export class SignInNeeded extends Error {
  constructor(readonly returnTo: string) {
    super('sign in first');
  }
}

export interface ConsoleCaller {
  session: ConsoleSession;
  principal: MerchantPrincipal;
}

/**
 * The session's merchant user, authenticated the way the REST API authenticates a bearer token
 * (same verifier, same merchant checks, step-up judged now from the token's amr and auth_time):
 * a console session is that token, never more.
 */
export async function sessionCaller(deps: MerchantWebDeps, ctx: Context): Promise<ConsoleCaller | null> {
  const session = await readSession(deps, ctx);
  if (!session) return null;
  const principal = await authenticateMerchant(deps.store.c, deps.verifyJwt, `Bearer ${session.token}`, Math.floor(deps.nowMs() / 1000), deps.merchantCache);
  if (!principal || principal.credential !== 'jwt') return null;
  return { session, principal };
}

/** The merchant's own limit for the bucket, shared with its REST calls: reads spend verify's, writes capture's. */
async function spendRate(deps: MerchantWebDeps, p: MerchantPrincipal, bucket: RateBucket): Promise<void> {
  const d = await consumeRate(deps.store.c, `${p.merchantId}:${bucket}`, ratePolicyFor(deps.env, p, bucket), deps.nowMs());
  if (!d.allowed) throw ApiError.rateLimited(d.retryAfterSeconds);
}

/** A page (GET): signed in, allowed as the REST route that reads the same would be, and within the read limit. */
export async function pageCaller(deps: MerchantWebDeps, ctx: Context, permission: Permission | null): Promise<ConsoleCaller> {
  const caller = await sessionCaller(deps, ctx);
  if (!caller) throw new SignInNeeded(ctx.originalUrl);
  const refusal = authorizationRefusal(caller.principal, permission);
  if (refusal) throw refusal;
  await spendRate(deps, caller.principal, 'verify');
  return caller;
}

/**
 * A form post: from our own origin (the borrower pages' rule), then the session, then the form's
 * CSRF token (the session's own), then the same authorisation as the REST route, then the limit.
 */
export async function actionCaller(
  deps: MerchantWebDeps,
  ctx: Context,
  permission: Permission | null,
  bucket: RateBucket,
): Promise<ConsoleCaller & { form: Record<string, string | string[]> }> {
  const judged = fromOwnOrigin(deps.env, ctx);
  if (!judged.ok) throw new ApiError('FORBIDDEN', judged.origin ? `A form from ${judged.origin} may not act in the merchant console.` : 'Send this form from the merchant console (its Origin header is missing).');
  const form = await readForm(ctx);
  const caller = await sessionCaller(deps, ctx);
  if (!caller) throw ApiError.unauthenticated('Your console session ended or is missing: sign in again.');
  if (!csrfMatches(caller.session, typeof form.csrf === 'string' ? form.csrf : undefined)) {
    throw new ApiError('FORBIDDEN', 'This form carries no valid CSRF token for your session: reload the page and send it again.', { extra: { reason: 'csrf' } });
  }
  const refusal = authorizationRefusal(caller.principal, permission);
  if (refusal) throw refusal;
  await spendRate(deps, caller.principal, bucket);
  return { ...caller, form };
}
