import type { Context } from 'koa';
import { ApiError } from '../domain/errors.js';

export const MAX_BODY_BYTES = 64 * 1024;

/** Reads a JSON request body: 415 unless application/json, 413 past the limit, 400 when unparsable. */
export async function readJsonBody(ctx: Context): Promise<unknown> {
  if (!ctx.is('application/json')) throw ApiError.unsupportedMediaType();
  const declared = Number(ctx.get('content-length') || '0');
  if (declared > MAX_BODY_BYTES) throw ApiError.payloadTooLarge(MAX_BODY_BYTES);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw ApiError.payloadTooLarge(MAX_BODY_BYTES);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw ApiError.invalidRequest([{ path: '', message: 'body is not valid JSON' }]);
  }
}
