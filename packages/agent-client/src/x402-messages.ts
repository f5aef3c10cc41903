import { z } from 'zod';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';

/** x402 v2 PaymentRequirements as the agent reads them from a merchant's 402. */
export const RequirementsSchema = z.looseObject({
  scheme: z.string().min(1),
  network: z.string().regex(/^[a-z0-9-]+:[A-Za-z0-9-]+$/),
  asset: z.string().min(1),
  amount: z.string().regex(/^[0-9]{1,78}$/),
  payTo: z.string().min(1),
  maxTimeoutSeconds: z.number().int().nonnegative(),
  extra: z.record(z.string(), z.unknown()).default({}),
});
export type Requirements = z.infer<typeof RequirementsSchema>;

export const PaymentRequiredSchema = z.looseObject({
  x402Version: z.literal(2),
  error: z.string().optional(),
  resource: z.looseObject({ url: z.string().min(1), description: z.string().optional(), mimeType: z.string().optional() }),
  accepts: z.array(RequirementsSchema).min(1),
});
export type PaymentRequiredMessage = z.infer<typeof PaymentRequiredSchema>;

export const SettleResponseSchema = z.looseObject({
  success: z.boolean(),
  errorReason: z.string().optional(),
  errorMessage: z.string().optional(),
  payer: z.string().optional(),
  transaction: z.string(),
  network: z.string(),
  amount: z.string().optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
});
export type SettleResponseMessage = z.infer<typeof SettleResponseSchema>;

export class X402MessageError extends Error {
  override readonly name = 'X402MessageError';
}

/** Decodes and validates a PAYMENT-REQUIRED header value. */
export function parsePaymentRequiredHeader(value: string): PaymentRequiredMessage {
  let raw: unknown;
  try {
    raw = decodePaymentRequiredHeader(value);
  } catch {
    throw new X402MessageError('PAYMENT-REQUIRED is not base64 JSON');
  }
  const r = PaymentRequiredSchema.safeParse(raw);
  if (!r.success) throw new X402MessageError(`PAYMENT-REQUIRED is not an x402 v2 PaymentRequired: ${r.error.issues[0]?.message ?? 'invalid'}`);
  return r.data;
}

/** Decodes a PAYMENT-RESPONSE header value; null when absent or malformed. */
export function parsePaymentResponseHeader(value: string | null): SettleResponseMessage | null {
  if (!value) return null;
  try {
    const r = SettleResponseSchema.safeParse(decodePaymentResponseHeader(value));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** The credit-scheme entry of a 402, optionally on a given network. */
export function creditOffer(required: PaymentRequiredMessage, network?: string): Requirements | undefined {
  return required.accepts.find((a) => a.scheme === 'credit' && (network === undefined || a.network === network));
}
