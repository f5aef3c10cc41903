import type { Context } from 'koa';
import type { z } from 'zod';
import { fieldIssues } from '@credit-facilitator/wire/envelope';
import { ApiError } from '../domain/errors.js';
import { readBodyText } from '../http/body.js';

/** A console form is small: a refund's signed authorization is the largest. */
export const MAX_FORM_BYTES = 16 * 1024;

/** Fields that may repeat (checkboxes); every other field keeps its first value. */
const LISTS = new Set(['events']);

/** Reads an HTML form post (application/x-www-form-urlencoded): 415 for another type, 413 past the limit. */
export async function readForm(ctx: Context): Promise<Record<string, string | string[]>> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw ApiError.unsupportedMediaType();
  const text = await readBodyText(ctx, MAX_FORM_BYTES);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    if (LISTS.has(k)) out[k] = [...((out[k] as string[] | undefined) ?? []), v];
    else if (!(k in out)) out[k] = v;
  }
  return out;
}

/** zod at the edge: a field that does not fit answers 400 naming it. */
export function parseFields<T extends z.ZodType>(schema: T, value: unknown, message = 'The form is invalid; see fields.'): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw ApiError.invalidRequest(fieldIssues(r.error), message);
  return r.data;
}
