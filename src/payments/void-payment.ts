import type { PaymentDeps } from './deps.js';
import { fingerprint } from '@credit-facilitator/wire/canonical';
import { ApiError } from '../domain/errors.js';
import { isUuid } from '@credit-facilitator/wire/ids';
import type { Receipt } from '../domain/payment.js';
import { claimIdempotencyKey, idempotencyId, releaseIdempotencyKey } from '../store/idempotency.js';
import { findPayment } from '../store/payments.js';
import { queueEntryOf } from '../store/settlement/queue.js';
import { claimForBatch, findClaim, isVoidClaim, voidClaimId } from '../store/settlement/claims.js';
import { finishVoid } from '../settlement/finish-void.js';
import { acceptedReceipt } from './status.js';

export interface VoidRequest {
  merchantId: string;
  paymentId: string;
  idempotencyKey: string;
}

/**
 * Voids a captured payment that no batch has claimed (the order was cancelled before
 * settlement). The race with the settlement shard is decided by one unique insert into
 * settlement_claims: the void's claim or the batch's, never by timing. Once the void holds the
 * claim, finishing it (the hold released, the payment and ledger marked, the workflow ended, the
 * queue entry dropped) is idempotent, and a shard that meets a void's claim finishes it too, so a
 * crash half-way loses nothing.
 */
export async function voidPayment(deps: PaymentDeps, req: VoidRequest): Promise<{ receipt: Receipt; replayed: boolean }> {
  const c = deps.store.c;
  if (!isUuid(req.paymentId)) throw ApiError.notFound('payment');
  const paymentId = req.paymentId.toLowerCase();
  const doc = await findPayment(c, paymentId);
  if (!doc || doc.merchantId !== req.merchantId) throw ApiError.notFound('payment');

  const now = new Date(deps.nowMs());
  const keyId = idempotencyId(req.merchantId, req.idempotencyKey);
  const claim = await claimIdempotencyKey(
    c,
    {
      _id: keyId,
      merchantId: req.merchantId,
      fingerprint: fingerprint({ void: paymentId }),
      paymentId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + deps.env.IDEMPOTENCY_RETENTION_HOURS * 3600_000),
    },
    now,
  );
  if (claim.kind === 'existing' && claim.doc.fingerprint !== fingerprint({ void: paymentId })) throw ApiError.idempotencyKeyConflict('void');
  try {
    const current = await acceptedReceipt(deps, doc);
    if (!current) throw ApiError.notFound('payment');
    if (current.status === 'VOIDED') return { receipt: current, replayed: true };
    if (current.batchId || current.status === 'CONFIRMED' || current.status === 'FAILED') throw ApiError.paymentAlreadyClaimed(current.batchId);
    if (doc.status !== 'CAPTURING') throw ApiError.paymentNotVoidable(current.status); // a legacy workflow's payment, still moving

    const held = await claimForBatch(c, voidClaimId(paymentId), [paymentId]);
    const bound = await findClaim(c, paymentId);
    if (!held.has(paymentId) || !bound) throw ApiError.paymentAlreadyClaimed(bound && !isVoidClaim(bound.batchId) ? bound.batchId : undefined);
    const voidedAt = bound.at.toISOString();
    const retry = { initialMs: deps.env.WEBHOOK_RETRY_INITIAL_MS, maxMs: deps.env.WEBHOOK_RETRY_MAX_MS };
    await finishVoid({ c, db: deps.store.db, temporal: deps.temporal, taskQueue: deps.env.TEMPORAL_TASK_QUEUE, retry }, queueEntryOf(doc), voidedAt);
    deps.statusCache?.payments.set(paymentId, { ...doc, status: 'VOIDED', voidedAt: bound.at });
    return { receipt: { ...current, status: 'VOIDED', voidedAt }, replayed: claim.kind === 'existing' };
  } catch (err) {
    if (claim.kind === 'claimed' && err instanceof ApiError) await releaseIdempotencyKey(c, keyId, paymentId);
    throw err;
  }
}
