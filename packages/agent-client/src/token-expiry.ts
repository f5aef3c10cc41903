/** The borrower token is refreshed when it is this close to expiry (interface spec: "about three minutes"). */
export const REFRESH_WINDOW_SECONDS = 180;

/** Tokens as the agent keeps them: the token response plus when it arrived, since `expires_in` is relative. */
export interface TokenTiming {
  obtainedAtMs: number;
  expiresInSeconds?: number;
}

/** Absolute expiry in ms, or undefined when the server did not say. */
export function tokenExpiresAtMs(t: TokenTiming): number | undefined {
  if (t.expiresInSeconds === undefined || !Number.isFinite(t.expiresInSeconds)) return undefined;
  return t.obtainedAtMs + t.expiresInSeconds * 1000;
}

/**
 * Time is the only signal: a token is refreshed when it expires within the window. What an identity
 * call (get_borrower_status) says about unlocked scopes is deliberately not an input here.
 */
export function needsRefresh(t: TokenTiming, nowMs: number, windowSeconds = REFRESH_WINDOW_SECONDS): boolean {
  const expiresAt = tokenExpiresAtMs(t);
  if (expiresAt === undefined) return false;
  return expiresAt - nowMs <= windowSeconds * 1000;
}
