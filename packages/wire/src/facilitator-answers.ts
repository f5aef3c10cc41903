import { z } from 'zod';

/**
 * Our facilitator's answers as a merchant-side client reads them (the demo merchant, the x402
 * reference-middleware client). Loose objects: a field the service adds later never breaks a client.
 * The server's own, exact schemas are in src/api/facilitator/response-schemas.ts.
 */
export const NetworkAnswer = z.string().regex(/^[a-z0-9-]+:[A-Za-z0-9*-]+$/);

export const ReceiptAnswerSchema = z.looseObject({
  paymentId: z.string().min(1),
  status: z.enum(['QUEUED', 'SUBMITTED', 'CONFIRMED', 'FAILED']),
  payer: z.string(),
  amount: z.string(),
  network: NetworkAnswer,
  orderRef: z.string(),
  transaction: z.string().optional(),
  batchId: z.string().optional(),
  blockNumber: z.string().optional(),
  confirmedAt: z.string().optional(),
  failureReason: z.string().optional(),
});
export type ReceiptAnswer = z.infer<typeof ReceiptAnswerSchema>;

export const CaptureAnswerSchema = z.looseObject({ receipt: ReceiptAnswerSchema, replayed: z.boolean() });

export const ErrorAnswerSchema = z.looseObject({
  error: z.looseObject({ code: z.string(), message: z.string().optional(), invalidReason: z.string().optional() }),
});

/** Whole seconds to wait from a Retry-After header, at least 1. */
export function retryAfterSeconds(header: string | null): number {
  const s = Number(header);
  return Number.isFinite(s) && s > 0 ? Math.ceil(s) : 1;
}
