import { z } from 'zod';
import { PaymentRequirementsSchema } from '../../domain/envelope.js';

/** The request's outer shape; the credit envelope inside is judged by the domain rules. */
export const VerifyBodySchema = z.object({
  x402Version: z.number().int(),
  paymentPayload: z.record(z.string(), z.unknown()),
  paymentRequirements: PaymentRequirementsSchema,
});

export const CaptureBodySchema = z.object({
  x402Version: z.number().int(),
  paymentPayload: z.record(z.string(), z.unknown()),
  paymentRequirements: PaymentRequirementsSchema.optional(),
});

export const IdempotencyKeySchema = z.uuid({ version: 'v4' });
