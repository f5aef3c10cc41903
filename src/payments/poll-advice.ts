import { isTerminal, type PaymentStatus } from '../domain/payment.js';

/**
 * The Retry-After (seconds) of a status answer the merchant was not held for: when to ask again
 * about a payment still moving. QUEUED waits for its batch to close: at once when a shard sends
 * as soon as it is free (BATCH_MIN_PAYMENTS 1, the default), so 1; else up to the batch window
 * (BATCH_MAX_WAIT_MS, rounded up). SUBMITTED waits for its transaction to be mined with
 * CONFIRMATIONS blocks, about a second on anvil, a few on Base. Undefined for a final status.
 */
export function retryAfterSeconds(status: PaymentStatus, batchMaxWaitMs: number, batchMinPayments = 1): number | undefined {
  if (isTerminal(status)) return undefined;
  if (status === 'SUBMITTED' || batchMinPayments <= 1) return 1;
  return Math.max(1, Math.ceil(batchMaxWaitMs / 1000));
}
