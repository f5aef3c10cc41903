import { ApiError } from '../domain/errors.js';
import { newId } from '@credit-facilitator/wire/ids';
import type { SpendIntentDoc } from '../store/documents.js';
import type { Collections } from '../store/collections.js';
import { holdCredit } from '../store/borrowers.js';
import { createSpendIntentDoc } from '../store/spend-intents.js';
import type { PaymentTerms } from '@credit-facilitator/wire/payment-terms';

export interface SpendIntentRequest extends PaymentTerms {
  resource: string;
  idempotencyKey: string;
  expiresAt: number;
}

/**
 * Reserves credit for one payment the agent is about to sign. The hold is keyed by the intent id,
 * so a retry never reserves twice; the intent's credit comes back if it expires unused.
 */
export async function createSpendIntent(c: Collections, req: SpendIntentRequest, now: Date): Promise<SpendIntentDoc> {
  const id = newId();
  const held = await holdCredit(c, req.borrowerId, id, Number(req.amount));
  if (held === 'borrower_not_active') throw ApiError.paymentRejected('borrower_not_active');
  if (held === 'insufficient_credit') throw ApiError.paymentRejected('insufficient_credit');
  return (await createSpendIntentDoc(c, id, req, now)).doc;
}
