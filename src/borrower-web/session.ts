import { hkdfSync, randomBytes } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Context } from 'koa';
import type { BorrowerWebDeps } from './deps.js';
import { publicOrigin } from '../config/env.js';
import { isSpent, spendOnce } from '../store/spent-tokens.js';

/**
 * The borrower page's session: a short-lived HS256 JWT in an HttpOnly, SameSite=Strict cookie
 * (Secure when the public origin is https), scoped to /borrower. Its key is derived from the
 * authorization server's cookie secrets, so every API process shares it. Each session has a random
 * id: signing out records it as ended (spent-tokens.ts), so the old cookie is refused at once.
 * A second cookie carries the sign-in challenge, tying a WalletProof to the browser that asked;
 * the challenge is spent when a sign-in uses it, so the same signed challenge signs in only once.
 */
export const SESSION_COOKIE = 'borrower_session';
export const CHALLENGE_COOKIE = 'borrower_signin';
export const SESSION_TTL_SECONDS = 15 * 60;
export const CHALLENGE_TTL_SECONDS = 5 * 60;
const COOKIE_PATH = '/borrower';
const SESSION_TYP = 'borrower-session+jwt';
const CHALLENGE_TYP = 'borrower-signin+jwt';

export interface BorrowerSession {
  borrowerId: string;
  wallet: string;
}

export interface SignInChallenge {
  wallet: string;
  challenge: string;
  issuedAt: number;
}

/** One HMAC key per cookie secret: the first signs, any verifies (so the secrets can be rotated). */
function sessionKeys(deps: BorrowerWebDeps): Uint8Array[] {
  return deps.oauthKeys.cookieKeys.map((secret) => new Uint8Array(hkdfSync('sha256', secret, 'x402-borrower-page', 'borrower page session v1', 32)));
}

const audience = (deps: BorrowerWebDeps) => `${publicOrigin(deps.env)}${COOKIE_PATH}`;

const sessionSpentId = (jti: string) => `borrower-session:${jti}`;
const challengeSpentId = (challenge: string) => `borrower-signin:${challenge}`;

async function sign(deps: BorrowerWebDeps, typ: string, claims: Record<string, unknown>, subject: string, ttlSeconds: number): Promise<string> {
  const now = Math.floor(deps.nowMs() / 1000);
  const [key] = sessionKeys(deps);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ })
    .setJti(randomBytes(16).toString('base64url'))
    .setIssuer(publicOrigin(deps.env))
    .setAudience(audience(deps))
    .setSubject(subject)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(key as Uint8Array);
}

async function verify(deps: BorrowerWebDeps, typ: string, token: string | undefined): Promise<Record<string, unknown> | null> {
  if (!token || token.length > 4096) return null;
  for (const key of sessionKeys(deps)) {
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['HS256'],
        typ,
        issuer: publicOrigin(deps.env),
        audience: audience(deps),
        currentDate: new Date(deps.nowMs()),
      });
      return payload;
    } catch (err) {
      if (!(err instanceof joseErrors.JWSSignatureVerificationFailed)) return null;
    }
  }
  return null;
}

function setCookie(deps: BorrowerWebDeps, ctx: Context, name: string, value: string | null, maxAgeSeconds: number): void {
  const secure = publicOrigin(deps.env).startsWith('https:');
  // Behind a TLS-terminating proxy Koa sees plain http; the public origin says what the browser uses.
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(name, value, { httpOnly: true, secure, sameSite: 'strict', path: COOKIE_PATH, maxAge: value ? maxAgeSeconds * 1000 : 0, overwrite: true, signed: false });
}

export async function startSession(deps: BorrowerWebDeps, ctx: Context, s: BorrowerSession): Promise<void> {
  setCookie(deps, ctx, SESSION_COOKIE, await sign(deps, SESSION_TYP, { wallet: s.wallet }, s.borrowerId, SESSION_TTL_SECONDS), SESSION_TTL_SECONDS);
}

/** Ends the browser's session server-side (its id is recorded until it would expire) and clears the cookie. */
export async function endSession(deps: BorrowerWebDeps, ctx: Context): Promise<void> {
  const claims = await verify(deps, SESSION_TYP, ctx.cookies.get(SESSION_COOKIE));
  if (claims && typeof claims.jti === 'string' && typeof claims.exp === 'number') {
    await spendOnce(deps.store.c, sessionSpentId(claims.jti), new Date(claims.exp * 1000));
  }
  setCookie(deps, ctx, SESSION_COOKIE, null, 0);
}

/** The signed-in borrower, or null when the cookie is absent, forged, for another origin, expired or signed out. */
export async function readSession(deps: BorrowerWebDeps, ctx: Context): Promise<BorrowerSession | null> {
  const claims = await verify(deps, SESSION_TYP, ctx.cookies.get(SESSION_COOKIE));
  if (!claims || typeof claims.sub !== 'string' || typeof claims.wallet !== 'string' || typeof claims.jti !== 'string') return null;
  if (await isSpent(deps.store.c, sessionSpentId(claims.jti))) return null;
  return { borrowerId: claims.sub, wallet: claims.wallet };
}

export async function issueChallenge(deps: BorrowerWebDeps, ctx: Context, c: SignInChallenge): Promise<void> {
  const token = await sign(deps, CHALLENGE_TYP, { challenge: c.challenge, issued_at: c.issuedAt }, c.wallet, CHALLENGE_TTL_SECONDS);
  setCookie(deps, ctx, CHALLENGE_COOKIE, token, CHALLENGE_TTL_SECONDS);
}

/** The challenge this browser was given, once: reading it clears the cookie. */
export async function takeChallenge(deps: BorrowerWebDeps, ctx: Context): Promise<SignInChallenge | null> {
  const claims = await verify(deps, CHALLENGE_TYP, ctx.cookies.get(CHALLENGE_COOKIE));
  setCookie(deps, ctx, CHALLENGE_COOKIE, null, 0);
  if (!claims || typeof claims.sub !== 'string' || typeof claims.challenge !== 'string' || typeof claims.issued_at !== 'number') return null;
  return { wallet: claims.sub, challenge: claims.challenge, issuedAt: claims.issued_at };
}

/** Spends a sign-in challenge: true the first time, false when a sign-in already used it (a replay). */
export function spendChallenge(deps: BorrowerWebDeps, c: SignInChallenge): Promise<boolean> {
  return spendOnce(deps.store.c, challengeSpentId(c.challenge), new Date((c.issuedAt + CHALLENGE_TTL_SECONDS) * 1000));
}
