import type { PaymentOutcome, PaymentState, Receipt } from '../domain/payment.js';
import type { PaymentDoc, SettlementQueueDoc } from '../store/documents.js';

/** The receipt from the store's projection; `state` (from the workflow) wins where it is known. */
export function toReceipt(doc: PaymentDoc, state?: PaymentState): Receipt {
  const status = state?.status ?? (doc.status === 'CAPTURING' ? 'QUEUED' : doc.status);
  const receipt: Receipt = {
    paymentId: doc._id,
    status,
    merchantId: doc.merchantId,
    payer: doc.borrowerId,
    amount: doc.amount,
    asset: doc.asset,
    network: doc.network,
    orderRef: doc.orderRef,
    capturedAt: doc.capturedAt.toISOString(),
  };
  const batchId = state ? state.batchId : doc.batchId;
  const transaction = state ? state.transaction : doc.transaction;
  const blockNumber = state ? state.blockNumber : doc.blockNumber;
  const confirmedAt = state ? state.confirmedAt : doc.confirmedAt?.toISOString();
  const failureReason = state ? state.failureReason : doc.failureReason;
  const voidedAt = state ? state.voidedAt : doc.voidedAt?.toISOString();
  if (batchId) receipt.batchId = batchId;
  if (transaction) receipt.transaction = transaction;
  if (blockNumber) receipt.blockNumber = blockNumber;
  if (confirmedAt) receipt.confirmedAt = confirmedAt;
  if (failureReason) receipt.failureReason = failureReason;
  if (voidedAt) receipt.voidedAt = voidedAt;
  return receipt;
}

/** The receipt a poll answers once the payment ended with `o`. */
export function finalReceipt(e: SettlementQueueDoc, o: PaymentOutcome): Receipt {
  const r: Receipt = {
    paymentId: e._id,
    status: o.status,
    merchantId: e.merchantId,
    payer: e.borrowerId,
    amount: e.amount,
    asset: e.workflow.asset,
    network: e.workflow.network,
    orderRef: e.workflow.orderRef,
    capturedAt: e.workflow.capturedAt,
  };
  if (o.status === 'VOIDED') return { ...r, voidedAt: o.voidedAt };
  if (o.status === 'CONFIRMED') return { ...r, batchId: o.batchId, transaction: o.transaction, blockNumber: o.blockNumber, confirmedAt: o.confirmedAt };
  return { ...r, batchId: o.batchId, failureReason: o.failureReason, ...(o.transaction ? { transaction: o.transaction } : {}) };
}
