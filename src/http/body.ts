import type { Context } from 'koa';
import { ApiError } from '../domain/errors.js';

export const MAX_BODY_BYTES = 64 * 1024;
/**
 * Far deeper than any request needs (an x402 capture nests 5 levels). Recursive code downstream
 * (canonical JSON for fingerprints, BSON, schema checks) must never meet a 10,000-level body.
 */
export const MAX_JSON_DEPTH = 32;
export const BODY_NOT_JSON = 'The body is not valid JSON.';
const TOO_DEEP = `The body nests deeper than ${MAX_JSON_DEPTH} levels.`;
const OUT_OF_RANGE = 'The body holds a number too large for a double (it would parse as Infinity).';

/** The deepest nesting of arrays and objects in JSON text, counted without parsing (strings skipped). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) max = Math.max(max, ++depth);
    else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return max;
}

/** The request body as UTF-8 text: 413 when the declared length or the bytes read pass maxBytes (read no further). */
export async function readBodyText(ctx: Context, maxBytes: number): Promise<string> {
  if (Number(ctx.get('content-length') || '0') > maxBytes) throw ApiError.payloadTooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw ApiError.payloadTooLarge(maxBytes);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads a JSON request body: 415 unless application/json, 413 past the limit, 400 when unparsable, too deep or out of range. */
export async function readJsonBody(ctx: Context): Promise<unknown> {
  if (!ctx.is('application/json')) throw ApiError.unsupportedMediaType();
  const text = await readBodyText(ctx, MAX_BODY_BYTES);
  // Depth first: parsing is iterative, but what reads the result (canonical JSON, BSON) recurses.
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw ApiError.invalidRequest([{ path: '', message: TOO_DEEP }], TOO_DEEP);
  let infinite = false;
  let body: unknown;
  try {
    body = JSON.parse(text, (_key, v: unknown) => {
      if (typeof v === 'number' && !Number.isFinite(v)) infinite = true;
      return v;
    }) as unknown;
  } catch {
    throw ApiError.invalidRequest([{ path: '', message: BODY_NOT_JSON }], BODY_NOT_JSON);
  }
  if (infinite) throw ApiError.invalidRequest([{ path: '', message: OUT_OF_RANGE }], OUT_OF_RANGE);
  return body;
}
