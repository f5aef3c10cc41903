import type { Context } from 'koa';
import { publicOrigin, type Env } from '../config/env.js';

/**
 * A state-changing request from our own pages: browsers send Origin on every POST, and it must be
 * the public origin. With a SameSite=Strict cookie this keeps other sites out (CSRF). The borrower
 * pages and the merchant console both judge their POSTs by it.
 */
export function fromOwnOrigin(env: Env, ctx: Context): { ok: true } | { ok: false; origin: string } {
  const origin = ctx.get('origin');
  return origin && origin === publicOrigin(env) ? { ok: true } : { ok: false, origin };
}
