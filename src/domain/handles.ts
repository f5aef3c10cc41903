/** Borrower handles: 3-32 of a-z 0-9 _ -, starting with a letter; compared in lower case. */
export const HANDLE_RE = /^[a-z][a-z0-9_-]{2,31}$/;

/** Names an operator or a user could mistake for the service itself. */
const RESERVED = new Set(['admin', 'administrator', 'root', 'support', 'system', 'facilitator', 'x402', 'credit', 'operator', 'security']);

export type HandleCheck = { ok: true; handle: string } | { ok: false; reason: 'invalid_format' | 'reserved' };

export function normalizeHandle(raw: string): HandleCheck {
  const handle = raw.trim().toLowerCase();
  if (!HANDLE_RE.test(handle)) return { ok: false, reason: 'invalid_format' };
  if (RESERVED.has(handle)) return { ok: false, reason: 'reserved' };
  return { ok: true, handle };
}
