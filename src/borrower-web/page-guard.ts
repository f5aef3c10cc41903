import type { Context } from 'koa';
import type { BorrowerWebDeps } from './deps.js';
import { fromOwnOrigin } from '../http/same-origin.js';
import { ApiError } from '../domain/errors.js';
import { readSession, type BorrowerSession } from './session.js';

/**
 * A state-changing request must come from our own page: browsers send Origin on every POST, and
 * it must be the public origin. With the SameSite=Strict cookie this keeps other sites out (CSRF).
 */
export function requireSameOrigin(deps: BorrowerWebDeps, ctx: Context): void {
  const judged = fromOwnOrigin(deps.env, ctx);
  if (judged.ok) return;
  const origin = judged.origin;
  throw new ApiError('FORBIDDEN', origin ? `Requests from ${origin} may not act on a borrower account.` : 'Send this request from the borrower page (its Origin header is missing).');
}

/** The signed-in borrower, or 401. */
export async function requireSession(deps: BorrowerWebDeps, ctx: Context): Promise<BorrowerSession> {
  const session = await readSession(deps, ctx);
  if (!session) throw new ApiError('UNAUTHENTICATED', 'Sign in with your wallet on the borrower page first (the session is missing or expired).');
  return session;
}

/** requireSession, then requireSameOrigin: every POST that acts for the borrower. */
export async function requireSessionPost(deps: BorrowerWebDeps, ctx: Context): Promise<BorrowerSession> {
  const session = await requireSession(deps, ctx);
  requireSameOrigin(deps, ctx);
  return session;
}
