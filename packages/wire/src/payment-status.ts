// Imported (through src/domain) by Temporal workflow code: no dependencies, no Node built-ins.

/** A payment's life: QUEUED -> SUBMITTED -> CONFIRMED, or FAILED; VOIDED when the merchant voids it before any batch. */
export const PAYMENT_STATUSES = ['QUEUED', 'SUBMITTED', 'CONFIRMED', 'FAILED', 'VOIDED'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** A refund's life: PENDING -> SUBMITTED -> SUCCEEDED, or FAILED (its amount is then refundable again). */
export const REFUND_STATUSES = ['PENDING', 'SUBMITTED', 'SUCCEEDED', 'FAILED'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];
