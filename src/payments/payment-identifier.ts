import type { PaymentPayload } from '@x402/core/types';
import { extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';

export type PaymentIdentifierKey = { kind: 'absent' } | { kind: 'invalid'; errors: string[] } | { kind: 'key'; key: string };

/**
 * The capture's idempotency key from the x402 `payment-identifier` extension of the payment
 * payload, for a merchant that sends no Idempotency-Key header: the client's payment id, kept
 * case-sensitive and prefixed `pid:`, so it never meets a header key (a UUID) in the key store.
 */
export function keyFromPaymentIdentifier(paymentPayload: Record<string, unknown>): PaymentIdentifierKey {
  const extensions = paymentPayload.extensions;
  if (!extensions || typeof extensions !== 'object' || !(PAYMENT_IDENTIFIER in extensions)) return { kind: 'absent' };
  const { id, validation } = extractAndValidatePaymentIdentifier(paymentPayload as unknown as PaymentPayload);
  if (!validation.valid || !id) return { kind: 'invalid', errors: validation.errors ?? ['no id'] };
  return { kind: 'key', key: `pid:${id}` };
}
