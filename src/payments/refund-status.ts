import type { PaymentDeps } from './deps.js';
import type { Receipt } from '../domain/payment.js';
import { refundTotals } from '../domain/refunds.js';
import { findPaymentRefunds } from '../store/refunds.js';
import { refundView, startRefundWorkflow } from './refund-payment.js';

/** A PENDING refund this old whose workflow may never have started (its API process died in between). */
const RESTART_PENDING_AFTER_MS = 60_000;

/**
 * A CONFIRMED payment's receipt with its refunds (one _id read, skipped when the shards' board
 * says the payment has none: see PaymentStatusCache.mayHaveRefunds). A refund left PENDING because
 * its API process died between recording it and starting its workflow is started here: the start
 * is keyed by refund id, so a refund already under way is untouched.
 */
export async function withRefunds(deps: Pick<PaymentDeps, 'store' | 'temporal' | 'env' | 'nowMs' | 'logger' | 'statusCache'>, receipt: Receipt): Promise<Receipt> {
  if (receipt.status !== 'CONFIRMED') return receipt;
  const cache = deps.statusCache;
  const capturedAt = new Date(receipt.capturedAt);
  if (cache && !(await cache.mayHaveRefunds(deps.store.c, deps.env.SETTLEMENT_SHARDS, { _id: receipt.paymentId, capturedAt }, deps.nowMs()))) return receipt;
  const doc = await findPaymentRefunds(deps.store.c, receipt.paymentId);
  if (!doc || doc.refunds.length === 0) return receipt;
  const stale = doc.refunds.filter((r) => r.status === 'PENDING' && deps.nowMs() - r.createdAt.getTime() > RESTART_PENDING_AFTER_MS);
  for (const r of stale) {
    await startRefundWorkflow(deps, { paymentId: doc._id, refundId: r.refundId }, doc.merchantId).catch((err: unknown) =>
      deps.logger.warn('could not restart a pending refund', { refundId: r.refundId, error: err instanceof Error ? err.message : String(err) }),
    );
  }
  return { ...receipt, amountRefunded: refundTotals(doc.refunds).refunded.toString(), refunds: doc.refunds.map(refundView) };
}
