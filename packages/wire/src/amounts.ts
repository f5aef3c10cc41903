import { z } from 'zod';

/** Amounts are capped so they stay exact as JS numbers where the store needs arithmetic. */
export const MAX_AMOUNT = 2n ** 53n - 1n;

const AMOUNT_RE = /^[1-9][0-9]{0,15}$/;

// One refinement, not regex + refine: zod 4 runs later checks even after a failed regex,
// and BigInt() throws on anything that is not an integer literal.
/** Positive integer of base units as a plain decimal string: no sign, leading zero, point or exponent. */
export const AmountString = z.string().superRefine((s, ctx) => {
  if (!AMOUNT_RE.test(s)) {
    ctx.addIssue({ code: 'custom', message: 'must be a positive integer of base units as a decimal string' });
  } else if (BigInt(s) > MAX_AMOUNT) {
    ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_AMOUNT}` });
  }
});

/** Parses an AmountString to bigint; throws a TypeError otherwise. */
export function parseAmount(s: string): bigint {
  const r = AmountString.safeParse(s);
  if (!r.success) throw new TypeError(`invalid amount: ${r.error.issues[0]?.message ?? 'malformed'}`);
  return BigInt(r.data);
}
