import type { Store } from '../store/mongo.js';
import type { PaymentDeps } from './deps.js';
import { fingerprint } from '@credit-facilitator/wire/canonical';
import { ApiError } from '../domain/errors.js';
import { isUuid } from '@credit-facilitator/wire/ids';
import type { Receipt } from '../domain/payment.js';
import { closeHolds } from '../store/borrowers.js';
import type { SettlementQueueDoc } from '../store/documents.js';
import { claimIdempotencyKey, idempotencyId, releaseIdempotencyKey } from '../store/idempotency.js';
import { recordLedgerLines } from '../store/payment-ledger.js';
import { ledgerLineOf } from '../domain/payment-ledger.js';
import { finalReceipt } from '../settlement/receipt.js';
import { findPayment, markVoided } from '../store/payments.js';
import { allQueues, announceVoid, claimForBatch, findClaim, isVoidClaim, queueEntryOf, removeFromQueues, voidClaimId } from '../store/settlement-queue.js';
import { notifyOne } from '../settlement/notify-payments.js';
import { emitWebhookEvents, type EmitDeps } from '../webhooks/emit.js';
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
  if (claim.kind === 'existing' && claim.doc.fingerprint !== fingerprint({ void: paymentId })) throw ApiError.idempotencyKeyConflict();
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

export interface FinishVoidDeps extends EmitDeps {
  db: Store['db'];
}

/** Everything a void does once it holds the claim; each step is idempotent. */
export async function finishVoid(deps: FinishVoidDeps, entry: SettlementQueueDoc, voidedAt: string): Promise<void> {
  const { c } = deps;
  const outcome = { status: 'VOIDED', voidedAt } as const;
  await markVoided(c, entry._id, new Date(voidedAt));
  await announceVoid(c, entry._id, new Date(voidedAt));
  await closeHolds(c, entry.borrowerId, [entry.spendIntentId], 'available');
  await recordLedgerLines(c, [ledgerLineOf(finalReceipt(entry, outcome))]);
  await notifyOne(deps.temporal, deps.taskQueue, entry, outcome);
  await emitWebhookEvents(deps, `void-${entry._id}`, [entry], outcome);
  await removeFromQueues(c, await allQueues(deps.db), [entry._id]);
}
