import { hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { EncryptJWT, jwtDecrypt } from 'jose';
import type { Context } from 'koa';
import { publicOrigin } from '../config/env.js';
import { isSpent, spendOnce } from '../store/spent-tokens.js';
import type { MerchantWebDeps } from './deps.js';

/**
 * The console's session: the merchant user's own token from the identity provider, kept in an
 * encrypted (A256GCM), HttpOnly, SameSite=Strict cookie scoped to /merchant (Secure when the public
 * origin is https). Every request authenticates that token again exactly as the REST API would
 * (console-auth.ts), so the session never outlives it or holds more than it. Each session has a
 * random id (signing out records it as ended, as the borrower page does) and a CSRF token that
 * every form carries back.
 */
export const SESSION_COOKIE = 'merchant_console';
const COOKIE_PATH = '/merchant';
/** The longest a session lasts, whatever the token's own expiry (which ends it sooner). */
export const SESSION_MAX_SECONDS = 8 * 3600;

export interface ConsoleSession {
  /** The merchant user's JWT as the identity provider issued it. */
  token: string;
  csrf: string;
  jti: string;
  exp: number;
}

function sessionKeys(deps: MerchantWebDeps): Uint8Array[] {
  return deps.oauthKeys.cookieKeys.map((secret) => new Uint8Array(hkdfSync('sha256', secret, 'x402-merchant-console', 'merchant console session v1', 32)));
}

const audience = (deps: MerchantWebDeps) => `${publicOrigin(deps.env)}${COOKIE_PATH}`;
const spentId = (jti: string) => `merchant-console:${jti}`;

function setCookie(deps: MerchantWebDeps, ctx: Context, value: string | null, maxAgeSeconds: number): void {
  const secure = publicOrigin(deps.env).startsWith('https:');
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(SESSION_COOKIE, value, { httpOnly: true, secure, sameSite: 'strict', path: COOKIE_PATH, maxAge: value ? maxAgeSeconds * 1000 : 0, overwrite: true, signed: false });
}

/** Starts a session for a token that already authenticated; it ends when the token expires (tokenExp, unix seconds). */
export async function startSession(deps: MerchantWebDeps, ctx: Context, token: string, tokenExp: number): Promise<void> {
  const now = Math.floor(deps.nowMs() / 1000);
  const exp = Math.min(tokenExp, now + SESSION_MAX_SECONDS);
  const [key] = sessionKeys(deps);
  const cookie = await new EncryptJWT({ tok: token, csrf: randomBytes(24).toString('base64url') })
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', typ: 'merchant-console+jwt' })
    .setJti(randomBytes(16).toString('base64url'))
    .setIssuer(publicOrigin(deps.env))
    .setAudience(audience(deps))
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .encrypt(key as Uint8Array);
  setCookie(deps, ctx, cookie, Math.max(1, exp - now));
}

/** The browser's session, or null when absent, forged, for another origin, expired or signed out. */
export async function readSession(deps: MerchantWebDeps, ctx: Context): Promise<ConsoleSession | null> {
  const cookie = ctx.cookies.get(SESSION_COOKIE);
  if (!cookie || cookie.length > 8192) return null;
  for (const key of sessionKeys(deps)) {
    try {
      const { payload: p } = await jwtDecrypt(cookie, key, { issuer: publicOrigin(deps.env), audience: audience(deps), currentDate: new Date(deps.nowMs()) });
      if (typeof p.tok !== 'string' || typeof p.csrf !== 'string' || typeof p.jti !== 'string' || typeof p.exp !== 'number') return null;
      if (await isSpent(deps.store.c, spentId(p.jti))) return null;
      return { token: p.tok, csrf: p.csrf, jti: p.jti, exp: p.exp };
    } catch {
      // Another key may have sealed it (rotated secrets); none did: no session.
    }
  }
  return null;
}

/** Ends the session server-side (its id is recorded until it would expire) and clears the cookie. */
export async function endSession(deps: MerchantWebDeps, ctx: Context, session: ConsoleSession | null): Promise<void> {
  if (session) await spendOnce(deps.store.c, spentId(session.jti), new Date(session.exp * 1000));
  setCookie(deps, ctx, null, 0);
}

/** The form's CSRF token is the session's own, compared in constant time. */
export function csrfMatches(session: ConsoleSession, sent: string | undefined): boolean {
  if (!sent) return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}
