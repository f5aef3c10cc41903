import type { AppDeps } from '../api/deps.js';
import { ApiError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { PaymentState, Receipt } from '../domain/payment.js';
import { findPayment } from '../store/payments.js';
import { findSpendIntentFate } from '../store/spend-intents.js';
import { paymentStatusQuery } from '../../workflows/definitions.js';
import { toReceipt } from './receipt.js';

const QUERY_DEADLINE_MS = 2000;

/**
 * Answers a status poll from the payment workflow's own state. When the workflow cannot be
 * queried (no worker running), the store's projection, which the workflow keeps, answers instead.
 * Another merchant's payment is indistinguishable from a missing one.
 */
export async function paymentStatus(deps: AppDeps, merchantId: string, paymentId: string): Promise<Receipt> {
  if (!isUuid(paymentId)) throw ApiError.notFound('payment');
  const doc = await findPayment(deps.store.c, paymentId.toLowerCase());
  if (!doc || doc.merchantId !== merchantId) throw ApiError.notFound('payment');
  if (doc.status === 'CAPTURING') {
    // Accepted (its spend intent consumed) but the workflow is still starting: QUEUED. Otherwise the
    // capture is still being checked, and the payment does not exist yet.
    const fate = await findSpendIntentFate(deps.store.c, doc.spendIntentId);
    if (fate?.fate !== 'CONSUMED' || fate.paymentId !== doc._id) throw ApiError.notFound('payment');
    return toReceipt(doc);
  }
  let state: PaymentState | undefined;
  try {
    state = await deps.temporal.withDeadline(Date.now() + QUERY_DEADLINE_MS, () =>
      deps.temporal.workflow.getHandle(doc._id).query(paymentStatusQuery),
    );
  } catch (err) {
    deps.logger.warn('payment workflow query failed; answering from the store', { paymentId: doc._id, error: err });
  }
  return toReceipt(doc, state);
}
