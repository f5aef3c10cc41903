import type { PaymentDeps } from './deps.js';
import { parseCreditPayload, type PaymentRequirements } from '@credit-facilitator/wire/envelope';
import { invalidReasonMessage, type InvalidReason } from '@credit-facilitator/wire/invalid-reasons';
import { evaluateVoucher } from '../domain/verification.js';
import { loadVerificationContext } from './context.js';
import { originalPaymentId } from './original-payment.js';

export interface VerifyOutcome {
  isValid: boolean;
  invalidReason?: InvalidReason;
  invalidMessage?: string;
  payer?: string;
  /** voucher_already_used: the caller's payment that holds the voucher (poll it). */
  paymentId?: string;
}

/** The gate check: runs every rule, changes nothing. */
export async function verifyPayment(
  deps: PaymentDeps,
  merchantId: string,
  x402Version: number,
  paymentPayload: Record<string, unknown>,
  requirements: PaymentRequirements | undefined,
): Promise<VerifyOutcome> {
  const parsed = parseCreditPayload(x402Version, paymentPayload);
  if (!parsed.ok) return invalid(parsed.reason);
  const ctx = await loadVerificationContext(deps, merchantId, parsed.voucher);
  const result = evaluateVoucher(
    { voucher: parsed.voucher, signature: parsed.signature, ...(parsed.accepted ? { accepted: parsed.accepted } : {}), ...(requirements ? { requirements } : {}) },
    ctx,
  );
  if (!result.ok) {
    const original = result.reason === 'voucher_already_used' ? await originalPaymentId(deps.store.c, merchantId, parsed.voucher).catch(() => undefined) : undefined;
    return { ...invalid(result.reason, result.payer), ...(original ? { paymentId: original, invalidMessage: `${invalidReasonMessage(result.reason)} The original payment is ${original}.` } : {}) };
  }
  return { isValid: true, payer: result.payer };
}

function invalid(reason: InvalidReason, payer?: string): VerifyOutcome {
  return { isValid: false, invalidReason: reason, invalidMessage: invalidReasonMessage(reason), ...(payer ? { payer } : {}) };
}
