import { z } from 'zod';
import { PaymentRequirementsSchema } from '@credit-facilitator/wire/envelope';
import { PAYMENT_STATUSES } from '../../domain/payment.js';

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

const IsoInstant = z.iso.datetime({ offset: true }).transform((s) => new Date(s).toISOString());

/**
 * GET /facilitator/payments: Stripe's list parameters. `created[gte]` / `created[lt]` (and `gt`,
 * `lte`) bound the capture time; every other query parameter is refused, so a typo is not
 * silently ignored.
 */
export const PaymentListQuerySchema = z
  .strictObject({
    limit: z.coerce.number().int().min(1).max(100).optional(),
    starting_after: z.string().max(64).optional(),
    status: z.enum(PAYMENT_STATUSES).optional(),
    orderRef: z.string().min(1).max(256).optional(),
    batchId: z.string().max(64).optional(),
    'created[gte]': IsoInstant.optional(),
    'created[gt]': IsoInstant.optional(),
    'created[lte]': IsoInstant.optional(),
    'created[lt]': IsoInstant.optional(),
  })
  .refine((q) => !(q.orderRef && q.batchId), { message: 'filter by orderRef or by batchId, not both', path: ['batchId'] });

export { WebhookEndpointBodySchema, WebhookEndpointUpdateSchema } from '../../webhooks/endpoint-schemas.js';

/** GET …/webhook-endpoints/{id}/deliveries: the list parameters of payments. */
export const WebhookDeliveryListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  starting_after: z.string().max(64).optional(),
});

import { BaseUnits } from '../../payments/refund-body-schema.js';

export { RefundAuthorizationSchema, RefundBodySchema } from '../../payments/refund-body-schema.js';

export const RefundAuthorizationQuerySchema = z.strictObject({
  amount: BaseUnits,
  /** Seconds the authorization stays valid (default 3600). */
  valid_for: z.coerce.number().int().min(900).max(7 * 24 * 3600).optional(),
});
