import type { Context } from 'koa';
import type { BorrowerWebDeps } from './deps.js';
import { ApiError } from '../domain/errors.js';
import { consumeRate } from '../store/rate-limits.js';

async function limit(deps: BorrowerWebDeps, bucket: string): Promise<void> {
  const policy = { perMinute: deps.env.WALLET_SIGNIN_PER_MIN, burst: deps.env.WALLET_SIGNIN_BURST };
  const d = await consumeRate(deps.store.c, `wallet-signin:${bucket}`, policy, deps.nowMs());
  if (!d.allowed) throw ApiError.rateLimited(d.retryAfterSeconds);
}

/**
 * Wallet sign-ins a source address may attempt (429 RATE_LIMITED with Retry-After past it).
 * Checked before the signature, so floods cost no signature recovery.
 */
export function limitSignInsFrom(deps: BorrowerWebDeps, ctx: Context): Promise<void> {
  return limit(deps, `ip:${ctx.ip}`);
}

/**
 * Sign-ins of one wallet, from any address. Checked after its signature verified, so nobody but
 * the wallet's holder can use up its allowance.
 */
export function limitSignInsOf(deps: BorrowerWebDeps, wallet: string): Promise<void> {
  return limit(deps, `wallet:${wallet.toLowerCase()}`);
}
