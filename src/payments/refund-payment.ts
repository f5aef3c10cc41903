import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { PaymentDeps } from './deps.js';
import type { RefundAuthorizationFields } from '../domain/refunds.js';
import { fingerprint } from '@credit-facilitator/wire/canonical';
import { ApiError } from '../domain/errors.js';
import { isUuid } from '@credit-facilitator/wire/ids';
import { REFUND_PROBLEM_FIELDS, REFUND_PROBLEM_MESSAGES, refundAuthorizationProblems, refundTotals, refundWorkflowId, type RefundView, type RefundWorkflowInput } from '../domain/refunds.js';
import type { RefundRecord } from '../store/documents.js';
import { claimIdempotencyKey, idempotencyId, releaseIdempotencyKey } from '../store/idempotency.js';
import { findPayment } from '../store/payments.js';
import { findPaymentRefunds, reserveRefund } from '../store/refunds.js';
import { refundNonce } from '../chain/refund.js';
import { refundTypedData, signedByFrom } from './refund-authorization.js';
import { acceptedReceipt } from './status.js';

/** The refund request as the route validated it (RefundBodySchema in src/api/facilitator/schemas.ts). */
export interface RefundBody {
  amount: string;
  authorization: RefundAuthorizationFields;
  signature: string;
}

export interface RefundRequest {
  merchantId: string;
  paymentId: string;
  idempotencyKey: string;
  body: RefundBody;
}

/** An authorization must leave this long to submit and mine the refund. */
const MIN_VALID_SECONDS = 600;

export function refundView(r: RefundRecord): RefundView {
  const v: RefundView = { refundId: r.refundId, amount: r.amount, status: r.status, createdAt: r.createdAt.toISOString() };
  if (r.transaction) v.transaction = r.transaction;
  if (r.blockNumber) v.blockNumber = r.blockNumber;
  if (r.debtReduced) v.debtReduced = r.debtReduced;
  if (r.failureReason) v.failureReason = r.failureReason;
  return v;
}

/**
 * Refunds all or part of a CONFIRMED payment with the merchant's signed EIP-3009 authorization.
 * Everything that can be judged here is (the authorization pays the settlement contract from the
 * payout address, for this payment and amount, signed by that address); the amount is then reserved
 * under the payment's fenced lease, so refunds never together exceed the payment, and the refund
 * workflow submits it, waits for the confirmations and books it. Answers 202 with the refund PENDING.
 */
export async function refundPayment(deps: PaymentDeps, req: RefundRequest): Promise<{ refund: RefundView; replayed: boolean }> {
  const c = deps.store.c;
  if (!isUuid(req.paymentId)) throw ApiError.notFound('payment');
  const paymentId = req.paymentId.toLowerCase();
  const doc = await findPayment(c, paymentId);
  if (!doc || doc.merchantId !== req.merchantId) throw ApiError.notFound('payment');

  const now = new Date(deps.nowMs());
  const keyId = idempotencyId(req.merchantId, req.idempotencyKey);
  const print = fingerprint({ refund: paymentId, body: req.body });
  const claim = await claimIdempotencyKey(
    c,
    {
      _id: keyId,
      merchantId: req.merchantId,
      fingerprint: print,
      paymentId,
      refundId: randomUUID(),
      createdAt: now,
      expiresAt: new Date(now.getTime() + deps.env.IDEMPOTENCY_RETENTION_HOURS * 3600_000),
    },
    now,
  );
  if (claim.kind === 'existing' && claim.doc.fingerprint !== print) throw ApiError.idempotencyKeyConflict('refund');
  const refundId = claim.doc.refundId;
  if (!refundId) throw ApiError.idempotencyKeyConflict('refund'); // the key was used for another kind of request
  try {
    const receipt = await acceptedReceipt(deps, doc);
    if (!receipt) throw ApiError.notFound('payment');
    if (receipt.status !== 'CONFIRMED' || !receipt.batchId || !receipt.transaction) throw ApiError.paymentNotConfirmed(receipt.status, 'A refund is possible');

    const { amount, authorization, signature } = req.body;
    const problems = refundAuthorizationProblems(authorization, {
      paymentId,
      settlement: deps.settlement.settlementContract,
      payoutAddress: doc.payTo,
      amount: BigInt(amount),
      nowSeconds: Math.floor(now.getTime() / 1000),
      minValidSeconds: MIN_VALID_SECONDS,
    });
    const fields = problems.map((p) => ({ path: REFUND_PROBLEM_FIELDS[p], message: REFUND_PROBLEM_MESSAGES[p] }));
    if (!(await signedByFrom(deps.settlement, authorization, signature as `0x${string}`))) {
      fields.push({ path: 'signature', message: "not authorization.from's canonical EIP-712 signature of this ReceiveWithAuthorization" });
    }
    if (fields.length > 0) throw ApiError.refundAuthorizationInvalid(fields);

    const record: RefundRecord = { refundId, amount, status: 'PENDING', authorization, signature, createdAt: now, updatedAt: now };
    deps.statusCache?.rememberRefund(paymentId); // this process's polls see it at once; others through the board
    const reserved = await reserveRefund(
      c,
      { _id: paymentId, merchantId: doc.merchantId, borrowerId: doc.borrowerId, amount: doc.amount, batchId: receipt.batchId, transaction: receipt.transaction },
      record,
    );
    if (reserved.kind === 'exceeds') throw ApiError.refundExceedsPayment(reserved.refundable);
    if (reserved.kind === 'nonce_used') throw ApiError.refundAuthorizationUsed(reserved.refundId);
    await startRefundWorkflow(deps, { paymentId, refundId }, doc.merchantId);
    return { refund: refundView(reserved.kind === 'exists' ? reserved.record : record), replayed: claim.kind === 'existing' };
  } catch (err) {
    if (claim.kind === 'claimed' && err instanceof ApiError) await releaseIdempotencyKey(c, keyId, paymentId);
    if (claim.kind === 'existing' && err instanceof ApiError) {
      // A replay after the refund was recorded answers it; one whose first attempt was refused is judged again.
      const kept = (await findPaymentRefunds(c, paymentId))?.refunds.find((r) => r.refundId === refundId);
      if (kept) return { refund: refundView(kept), replayed: true };
    }
    throw err;
  }
}

export async function startRefundWorkflow(deps: Pick<PaymentDeps, 'temporal' | 'env'>, input: RefundWorkflowInput, merchantId: string): Promise<void> {
  try {
    await deps.temporal.workflow.start('refundWorkflow', {
      taskQueue: deps.env.TEMPORAL_TASK_QUEUE,
      workflowId: refundWorkflowId(input.refundId),
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      searchAttributes: { MerchantId: [merchantId] },
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * The typed data a merchant's payout wallet signs to refund `amount` of a CONFIRMED payment (fresh
 * nonce bound to the payment), ready for eth_signTypedData_v4; POST it back with the signature to /refunds.
 */
export async function prepareRefundAuthorization(
  deps: PaymentDeps,
  req: { merchantId: string; paymentId: string; amount: string; validForSeconds?: number },
): Promise<{ typedData: ReturnType<typeof refundTypedData>; refundable: string }> {
  if (!isUuid(req.paymentId)) throw ApiError.notFound('payment');
  const paymentId = req.paymentId.toLowerCase();
  const doc = await findPayment(deps.store.c, paymentId);
  if (!doc || doc.merchantId !== req.merchantId) throw ApiError.notFound('payment');
  // The same rule as the refund itself: typed data for a payment that cannot be refunded would only be refused later.
  const receipt = await acceptedReceipt(deps, doc);
  if (!receipt) throw ApiError.notFound('payment');
  if (receipt.status !== 'CONFIRMED') throw ApiError.paymentNotConfirmed(receipt.status, 'A refund is possible');
  const refunds = (await findPaymentRefunds(deps.store.c, paymentId))?.refunds ?? [];
  const refundable = BigInt(doc.amount) - refundTotals(refunds).reserved;
  if (BigInt(req.amount) > refundable) throw ApiError.refundExceedsPayment(refundable);
  const nowSeconds = Math.floor(deps.nowMs() / 1000);
  const message = {
    from: doc.payTo.toLowerCase(),
    to: deps.settlement.settlementContract,
    value: req.amount,
    validAfter: '0',
    validBefore: String(nowSeconds + (req.validForSeconds ?? 3600)),
    nonce: refundNonce(paymentId),
  };
  return { typedData: refundTypedData(deps.settlement, message), refundable: refundable.toString() };
}
