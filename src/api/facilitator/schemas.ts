import { z } from 'zod';
import { PaymentRequirementsSchema } from '@credit-facilitator/wire/envelope';
import { PAYMENT_STATUSES } from '../../domain/payment.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhook-events.js';

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

const WebhookEventsSchema = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((a) => new Set(a).size === a.length, 'lists an event twice')
  .describe('The payment events the endpoint receives (default: all of them); webhook.test is sent on request whatever this says');

export const WebhookEndpointBodySchema = z.strictObject({
  url: z.string().min(1).max(2048).describe('https URL that receives signed events (Standard Webhooks)'),
  events: WebhookEventsSchema.optional(),
});

export const WebhookEndpointUpdateSchema = z.strictObject({ events: WebhookEventsSchema });

/** GET …/webhook-endpoints/{id}/deliveries: the list parameters of payments. */
export const WebhookDeliveryListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  starting_after: z.string().max(64).optional(),
});

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'a 0x-prefixed 20-byte hex address');
const Uint256 = z.string().regex(/^(0|[1-9][0-9]{0,77})$/, 'a decimal integer string').refine((s) => !/^[0-9]+$/.test(s) || BigInt(s) < 2n ** 256n, 'exceeds uint256'); // zod runs refinements after a failed regex too
const BaseUnits = z.string().regex(/^[1-9][0-9]{0,30}$/, 'a positive decimal string of base units');

/** The EIP-3009 ReceiveWithAuthorization the merchant's payout wallet signed (values as decimal strings). */
export const RefundAuthorizationSchema = z.strictObject({
  from: Address,
  to: Address,
  value: Uint256,
  validAfter: Uint256,
  validBefore: Uint256,
  nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x-prefixed 32-byte hex nonce'),
});

export const RefundBodySchema = z.strictObject({
  amount: BaseUnits.describe('Base units to refund; at most what is left of the payment'),
  authorization: RefundAuthorizationSchema,
  signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, 'a 65-byte hex signature'),
});

export const RefundAuthorizationQuerySchema = z.strictObject({
  amount: BaseUnits,
  /** Seconds the authorization stays valid (default 3600). */
  valid_for: z.coerce.number().int().min(900).max(7 * 24 * 3600).optional(),
});
