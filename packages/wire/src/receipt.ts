import { z } from 'zod';
import { PAYMENT_STATUSES, REFUND_STATUSES } from './payment-status.js';

/**
 * The receipt: what the facilitator answers for a payment (capture, void, poll, list, batch view,
 * webhooks, the signed receipt's claim). The one definition: the server's domain types and its
 * OpenAPI document derive from these schemas, and merchant-side clients parse answers with them.
 * z.object drops fields it does not know, so a field the service adds later never breaks a client.
 */
const BaseUnits = z.string().regex(/^[0-9]+$/).describe('Amount in the asset base units');
const IsoTime = z.string().describe('ISO 8601 timestamp');

export const RefundSchema = z.object({
  refundId: z.string(),
  amount: BaseUnits,
  status: z.enum(REFUND_STATUSES).describe('PENDING -> SUBMITTED -> SUCCEEDED, or FAILED (its amount is then refundable again)'),
  createdAt: IsoTime,
  transaction: z.string().optional().describe('The refundWithAuthorization transaction'),
  blockNumber: z.string().optional(),
  debtReduced: BaseUnits.optional().describe("How much of the borrower's on-chain debt the refund cleared (less than amount if they had already repaid)"),
  failureReason: z.string().optional(),
});
/** One refund as a poll and a webhook show it. */
export type RefundView = z.infer<typeof RefundSchema>;

export const ReceiptSchema = z.object({
  paymentId: z.string().describe('Poll GET /facilitator/payments/{paymentId} with it'),
  status: z.enum(PAYMENT_STATUSES),
  merchantId: z.string(),
  payer: z.string().describe('The borrower id'),
  amount: BaseUnits,
  asset: z.string(),
  network: z.string(),
  orderRef: z.string(),
  capturedAt: IsoTime,
  batchId: z.string().optional(),
  transaction: z.string().optional(),
  blockNumber: z.string().optional(),
  confirmedAt: IsoTime.optional(),
  failureReason: z.string().optional(),
  voidedAt: IsoTime.optional().describe('When the merchant voided it (status VOIDED)'),
  amountRefunded: BaseUnits.optional().describe('CONFIRMED payments with refunds: the sum of SUCCEEDED refunds'),
  refunds: z.array(RefundSchema).optional().describe('Every refund asked for, oldest first'),
});
export type Receipt = z.infer<typeof ReceiptSchema>;

/** POST /facilitator/capture's 200 answer. */
export const CaptureResponseSchema = z.object({
  receipt: ReceiptSchema,
  replayed: z.boolean().describe('true when this replays the first receipt for the same Idempotency-Key and body'),
});
export type CaptureResponse = z.infer<typeof CaptureResponseSchema>;
