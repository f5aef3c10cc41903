import { z } from 'zod';

/**
 * Our facilitator's error and network answers as a merchant-side client reads them. Loose: a
 * field the service adds later never breaks a client. The receipt is in receipt.ts (one shape for
 * server and clients); the server's exact error body is in src/api/facilitator/response-schemas.ts.
 */
export const NetworkAnswer = z.string().regex(/^[a-z0-9-]+:[A-Za-z0-9*-]+$/);

export const ErrorAnswerSchema = z.looseObject({
  error: z.looseObject({ code: z.string(), message: z.string().optional(), invalidReason: z.string().optional() }),
});

/** Whole seconds to wait from a Retry-After header, at least 1. */
export function retryAfterSeconds(header: string | null): number {
  const s = Number(header);
  return Number.isFinite(s) && s > 0 ? Math.ceil(s) : 1;
}
