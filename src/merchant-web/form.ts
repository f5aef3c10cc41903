import type { Context } from 'koa';
import type { z } from 'zod';
import { fieldIssues } from '@credit-facilitator/wire/envelope';
import { ApiError } from '../domain/errors.js';

/** A console form is small: a refund's signed authorization is the largest. */
export const MAX_FORM_BYTES = 16 * 1024;

/** Fields that may repeat (checkboxes); every other field keeps its first value. */
const LISTS = new Set(['events']);

/** Reads an HTML form post (application/x-www-form-urlencoded): 415 for another type, 413 past the limit. */
export async function readForm(ctx: Context): Promise<Record<string, string | string[]>> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw ApiError.unsupportedMediaType();
  if (Number(ctx.get('content-length') || '0') > MAX_FORM_BYTES) throw ApiError.payloadTooLarge(MAX_FORM_BYTES);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw ApiError.payloadTooLarge(MAX_FORM_BYTES);
    chunks.push(chunk as Buffer);
  }
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) {
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
