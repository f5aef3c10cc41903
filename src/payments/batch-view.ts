import type { PaymentDeps } from './deps.js';
import { ApiError } from '../domain/errors.js';
import { isUuid } from '@credit-facilitator/wire/ids';
import { newestFirst } from '../domain/payment-ledger.js';
import type { Receipt } from '../domain/payment.js';
import type { BatchStatus } from '../store/documents.js';
import { findBatch } from '../store/settlement/batches.js';
import { receiptsByIds } from './list-payments.js';

export interface BatchViewAnswer {
  batchId: string;
  status: BatchStatus;
  transaction?: string;
  blockNumber?: string;
  confirmedAt?: string;
  failureReason?: string;
  haltReason?: string;
  /** This merchant's payments in the batch (a batch also carries other merchants', never shown). */
  payments: Receipt[];
  /** Their count and sum, base units. */
  count: number;
  amount: string;
}

/** One settlement batch as a merchant may see it; a batch with none of its payments is 404, like another merchant's payment. */
export async function batchView(deps: PaymentDeps, merchantId: string, batchId: string): Promise<BatchViewAnswer> {
  const batch = isUuid(batchId) ? await findBatch(deps.store.c, batchId.toLowerCase()) : null;
  if (!batch) throw ApiError.notFound('batch');
  const payments = (await receiptsByIds(deps, merchantId, batch.paymentIds ?? [])).sort(newestFirst);
  if (payments.length === 0) throw ApiError.notFound('batch');
  return {
    batchId: batch._id,
    status: batch.status,
    ...(batch.transaction ? { transaction: batch.transaction } : {}),
    ...(batch.blockNumber ? { blockNumber: batch.blockNumber } : {}),
    ...(batch.confirmedAt ? { confirmedAt: batch.confirmedAt.toISOString() } : {}),
    ...(batch.failureReason ? { failureReason: batch.failureReason } : {}),
    ...(batch.haltReason ? { haltReason: batch.haltReason } : {}),
    payments,
    count: payments.length,
    amount: payments.reduce((sum, p) => sum + BigInt(p.amount), 0n).toString(),
  };
}
