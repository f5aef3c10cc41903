import { z } from 'zod';
import { INVALID_REASONS } from '@credit-facilitator/wire/invalid-reasons';
import { CaptureResponseSchema, ReceiptSchema, RefundSchema } from '@credit-facilitator/wire/receipt';
import { ERROR_STATUS, type ErrorCode } from '../../domain/errors.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhook-events.js';

/**
 * What the facilitator answers, as zod schemas: the OpenAPI document is generated from these
 * and the request schemas, and the contract test checks real responses against the document.
 * The receipt's schemas are the wire package's, shared with the clients.
 */
const BaseUnits = z.string().regex(/^[0-9]+$/).describe('Amount in the asset base units');
const IsoTime = z.string().describe('ISO 8601 timestamp');

export { CaptureResponseSchema, ReceiptSchema, RefundSchema };

export const RefundResponseSchema = z.object({
  refund: RefundSchema,
  replayed: z.boolean().describe('true when this replays the first answer for the same Idempotency-Key and body'),
});

export const RefundAuthorizationResponseSchema = z.object({
  typedData: z
    .object({
      types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
      primaryType: z.literal('ReceiveWithAuthorization'),
      domain: z.object({ name: z.string(), version: z.string(), chainId: z.number().int(), verifyingContract: z.string() }),
      message: z.object({ from: z.string(), to: z.string(), value: BaseUnits, validAfter: BaseUnits, validBefore: BaseUnits, nonce: z.string() }),
    })
    .describe('EIP-712 typed data for eth_signTypedData_v4, signed by the payout wallet'),
  refundable: BaseUnits.describe('What is left to refund, pending refunds counted'),
});

export const VoidResponseSchema = z.object({
  receipt: ReceiptSchema,
  replayed: z.boolean().describe('true when the payment was already VOIDED (by this or another request)'),
});

export const PaymentListSchema = z.object({
  object: z.literal('list'),
  data: z.array(ReceiptSchema).describe('Newest first (capture time, then paymentId)'),
  has_more: z.boolean().describe('true when another page follows: pass the last paymentId as starting_after'),
});

export const BatchViewSchema = z.object({
  batchId: z.string(),
  status: z.enum(['SUBMITTED', 'CONFIRMED', 'FAILED', 'RETRYING', 'HALTED', 'ABANDONED']).describe('HALTED: the batch settled on chain with content other than its recorded set; the shard stopped at it for an operator, and its payments read SUBMITTED. ABANDONED: never sent, its payments released to later batches (after a restore)'),
  transaction: z.string().optional(),
  blockNumber: z.string().optional(),
  confirmedAt: IsoTime.optional(),
  failureReason: z.string().optional(),
  haltReason: z.string().optional(),
  payments: z.array(ReceiptSchema).describe("The caller's payments in the batch (never another merchant's)"),
  count: z.number().int(),
  amount: BaseUnits.describe("Sum of the caller's payments in the batch"),
});

export const WebhookEndpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  createdAt: IsoTime,
  secretCreatedAt: IsoTime,
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).describe('The payment events it receives (payment.confirmed, payment.failed, payment.voided, payment.refunded)'),
});

export const WebhookEndpointSecretSchema = z.object({
  endpoint: WebhookEndpointSchema,
  secret: z.string().describe('whsec_…: shown in this answer only; verify signatures with it (Standard Webhooks)'),
});

export const WebhookEndpointListSchema = z.object({ object: z.literal('list'), data: z.array(WebhookEndpointSchema) });

export const WebhookDeliverySchema = z.object({
  id: z.string().describe('whd_…: one event sent to one endpoint, with its own attempts (a resend is a new delivery)'),
  endpointId: z.string(),
  eventId: z.string().describe('The event id (`webhook-id`), the same on every resend: receivers deduplicate on it'),
  eventType: z.string().describe('payment.confirmed, payment.failed, payment.voided, payment.refunded, or webhook.test'),
  createdAt: IsoTime,
  attempts: z.number().int().describe('Attempts made so far (0 until the first)'),
  outcome: z.enum(['pending', 'delivered', 'failed']).describe('pending: not delivered yet, retried at nextRetryAt; delivered: the endpoint answered 2xx; failed: no more attempts (URL refused, or retries ran out after 3 days)'),
  lastAttemptAt: IsoTime.optional(),
  lastStatusCode: z.number().int().optional().describe('What the endpoint answered last; absent when it did not answer (connection refused, timeout)'),
  lastLatencyMs: z.number().int().optional().describe('How long the last attempt took'),
  lastError: z.string().optional().describe('Why the last attempt failed'),
  nextRetryAt: IsoTime.optional().describe('When a pending delivery is tried again'),
  resendOf: z.string().optional().describe('The delivery this one resends'),
});

export const WebhookDeliveryListSchema = z.object({
  object: z.literal('list'),
  data: z.array(WebhookDeliverySchema).describe('Newest first'),
  has_more: z.boolean().describe('true when another page follows: pass the last id as starting_after'),
});

export const WebhookEndpointDeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });

export const SignedReceiptSchema = z.object({
  paymentId: z.string(),
  jws: z.string().describe('Compact JWS (ES256, typ x402-receipt+jwt): iss = this API, sub = paymentId, claim `receipt` = the CONFIRMED receipt; verify with GET /facilitator/receipt-keys'),
});

export const ReceiptKeysSchema = z.object({ keys: z.array(z.record(z.string(), z.unknown())).describe('JWKS of the receipt-signing key') });

export const VerifyResponseSchema = z.object({
  isValid: z.boolean(),
  invalidReason: z.enum(INVALID_REASONS).optional(),
  invalidMessage: z.string().optional().describe('What invalidReason means and what to do'),
  payer: z.string().optional(),
  paymentId: z.string().optional().describe('voucher_already_used: your payment that already holds this voucher; poll it'),
});

export const SupportedResponseSchema = z.object({
  kinds: z.array(
    z.object({
      x402Version: z.literal(2),
      scheme: z.literal('credit'),
      network: z.string(),
      extra: z.record(z.string(), z.unknown()),
    }),
  ),
  extensions: z.array(z.unknown()),
  signers: z.record(z.string(), z.array(z.string())),
});

const RateLimitSchema = z.object({
  perMinute: z.number().int(),
  burst: z.number().int(),
  source: z.enum(['merchant', 'default']).describe('merchant: an operator set this merchant\'s own (admin merchant limits); default: the RATE_LIMIT_* settings'),
});

export const MeResponseSchema = z.object({
  merchantId: z.string(),
  name: z.string().optional(),
  payoutAddress: z.string().describe('Where settlements pay this merchant'),
  credential: z.object({
    type: z.enum(['api_key', 'jwt']),
    id: z.string().describe('The API key id (as admin key list shows it) or the JWT subject'),
    steppedUp: z.boolean().optional().describe('JWT only: a recent MFA sign-in, which capture, void and refund need (an API key needs none)'),
  }),
  permissions: z.array(z.string()).describe('x402:settle:read (verify, polls, lists), x402:settle:create (capture, void, refund, webhooks)'),
  limits: z.object({
    verify: RateLimitSchema.describe('Verify and every read: polls, lists, batch views'),
    capture: RateLimitSchema.describe('Capture, void, refunds, webhook endpoint changes'),
    captureShare: z
      .object({
        share: z.number().describe('CAPTURE_MERCHANT_SHARE: the share of an API process\'s capture slots one merchant may hold'),
        maxInFlight: z.number().int().describe('What that share is now on the process that answered (its in-flight limit adapts to load)'),
      })
      .optional()
      .describe('Absent when captures are not capped per merchant'),
  }),
});

export const HealthResponseSchema = z.object({ status: z.literal('ok') });

export const ErrorBodySchema = z.object({
  error: z
    .looseObject({
      code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      requestId: z.string(),
      fields: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      invalidReason: z.enum(INVALID_REASONS).optional(),
      payer: z.string().optional().describe('PAYMENT_REJECTED: the address that signed the voucher, when it could be read'),
      requiredPermission: z.string().optional(),
      limitBytes: z.number().int().optional().describe('PAYLOAD_TOO_LARGE: the largest body the route takes'),
      batchId: z.string().optional().describe('PAYMENT_ALREADY_CLAIMED: the batch that holds the payment'),
      paymentStatus: z.string().optional().describe('PAYMENT_NOT_VOIDABLE, PAYMENT_NOT_CONFIRMED: the status that prevents it'),
      refundable: BaseUnits.optional().describe('REFUND_EXCEEDS_PAYMENT: what is left to refund'),
      refundId: z.string().optional().describe('REFUND_AUTHORIZATION_USED: the refund that holds the authorization'),
      paymentId: z.string().optional().describe('PAYMENT_REJECTED voucher_already_used: your payment that already holds this voucher; poll it'),
      allowedMethods: z.array(z.string()).optional().describe('METHOD_NOT_ALLOWED: the methods the route accepts (also in the Allow header)'),
      merchantInFlightLimit: z.number().int().optional().describe("UNAVAILABLE: the merchant's captures already hold this many of the process's capture slots, their share"),
    })
    .describe('The one error shape of every non-2xx answer'),
});
