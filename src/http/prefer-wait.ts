import { z } from 'zod';

/** The longest wait a status poll may ask for with `Prefer: wait=N`; more is clamped to this. */
export const MAX_WAIT_SECONDS = 30;

const WaitValueSchema = z
  .string()
  .regex(/^\d{1,9}$/)
  .transform((v) => Math.min(Number(v), MAX_WAIT_SECONDS));

/**
 * The seconds an RFC 7240 `Prefer` header asks the server to wait (`wait=N`), clamped to
 * MAX_WAIT_SECONDS; undefined when there is no `wait` preference or its value is not a whole number
 * of seconds. A malformed preference is ignored rather than refused (RFC 7240 section 2 lets a
 * server ignore what it cannot honour, and a client sending other preferences must not break). As
 * RFC 7240 says, only a preference's first instance counts; the value may be quoted.
 */
export function preferredWaitSeconds(header: string | readonly string[] | undefined): number | undefined {
  const joined = Array.isArray(header) ? header.join(',') : (header as string | undefined);
  if (!joined) return undefined;
  for (const preference of splitOutsideQuotes(joined, ',')) {
    const first = splitOutsideQuotes(preference, ';')[0] ?? '';
    const eq = first.indexOf('=');
    const name = (eq < 0 ? first : first.slice(0, eq)).trim().toLowerCase();
    if (name !== 'wait') continue;
    if (eq < 0) return undefined;
    const parsed = WaitValueSchema.safeParse(unquote(first.slice(eq + 1).trim()));
    return parsed.success ? parsed.data : undefined;
  }
  return undefined;
}

function unquote(v: string): string {
  return v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v;
}

/** `s` split at `sep` where it is not inside a quoted-string. */
function splitOutsideQuotes(s: string, sep: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '\\' && quoted) i++;
    else if (ch === '"') quoted = !quoted;
    else if (ch === sep && !quoted) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}
