import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Hash, Hex } from 'viem';
import { testUsdcAbi } from '../src/chain/abi.js';
import { awaitTransaction } from '../src/chain/await-transaction.js';
import { authorizationFromStrings, type Eip3009Authorization } from '../src/chain/eip3009.js';
import { RefundRevertedError, refundLogsIn, settledBatchEntries, submitRefund as sendRefund } from '../src/chain/refund.js';
import type { ChainContext } from '../src/chain/context.js';
import { refundTotals, type RefundWorkflowInput } from '../src/domain/refunds.js';
import { refundedEvent } from '../src/domain/webhook-events.js';
import { toReceipt } from '../src/settlement/receipt.js';
import { refundView } from '../src/payments/refund-payment.js';
import type { Store } from '../src/store/mongo.js';
import { findPaymentWithOutcome } from '../src/store/payment-outcomes.js';
import { findPaymentRefunds, updateRefund } from '../src/store/refunds.js';
import { bookRepayment } from '../src/store/repayments.js';
import { DEFAULT_WEBHOOK_RETRY, deliverWebhookEvents } from '../src/webhooks/emit.js';
import type { WebhookDeliveryInput } from '../src/temporal/webhook-definitions.js';
import type { WorkerMetrics } from '../src/observability/metrics.js';

export interface RefundActivityDeps {
  store: Store;
  chain: ChainContext;
  temporal: Client;
  taskQueue: string;
  settings: { confirmations: number };
  webhooks?: { retry: WebhookDeliveryInput['retry'] };
  metrics?: WorkerMetrics;
}

export type RefundConfirmation =
  | { status: 'confirmed'; transaction: string; blockNumber: string }
  | { status: 'reverted'; transaction: string }
  | { status: 'dropped' };

export interface RefundOutcome {
  refundId: string;
  status: 'SUCCEEDED' | 'FAILED';
  transaction?: string;
  blockNumber?: string;
  debtReduced?: string;
  failureReason?: string;
}

const invalid = (message: string) => ApplicationFailure.nonRetryable(message, 'REFUND_INVALID');

export function createRefundActivities(deps: RefundActivityDeps) {
  const c = deps.store.c;
  const chain = deps.chain;

  const load = async (input: RefundWorkflowInput) => {
    const doc = await findPaymentRefunds(c, input.paymentId);
    const refund = doc?.refunds.find((r) => r.refundId === input.refundId);
    if (!doc || !refund) throw invalid(`refund ${input.refundId} of payment ${input.paymentId} not found`);
    return { doc, refund };
  };

  /** The transaction that redeemed the authorization, from the asset's AuthorizationUsed event. */
  const redeemingTransaction = async (a: Eip3009Authorization): Promise<Hash | null> => {
    const used = await chain.publicClient.readContract({ address: chain.deployment.asset, abi: testUsdcAbi, functionName: 'authorizationState', args: [a.from, a.nonce] });
    if (!used) return null;
    const logs = await chain.publicClient.getContractEvents({
      address: chain.deployment.asset,
      abi: testUsdcAbi,
      eventName: 'AuthorizationUsed',
      args: { authorizer: a.from, nonce: a.nonce },
      fromBlock: BigInt(chain.deployment.deployBlock),
      toBlock: 'latest',
    });
    if (!logs[0]) throw new Error('authorization used but its transaction is not visible yet');
    return logs[0].transactionHash;
  };

  return {
    /**
     * Broadcasts refundWithAuthorization once, proving the payment's entry against the root its
     * settleBatch stored (entries decoded from that transaction). A retry that finds the
     * authorization already used follows the transaction that used it instead of sending again.
     */
    async submitRefund(input: RefundWorkflowInput): Promise<{ transaction: string }> {
      const { doc, refund } = await load(input);
      const authorization = authorizationFromStrings(refund.authorization);
      const redeemed = await redeemingTransaction(authorization);
      if (redeemed) {
        await updateRefund(c, doc._id, refund.refundId, { status: 'SUBMITTED', transaction: redeemed });
        return { transaction: redeemed };
      }
      try {
        const batch = await settledBatchEntries(chain, doc.transaction as Hash);
        const tx = await sendRefund(chain, { batchId: batch.batchId, entries: batch.entries, paymentId: doc._id, authorization, signature: refund.signature as Hex });
        await updateRefund(c, doc._id, refund.refundId, { status: 'SUBMITTED', transaction: tx });
        return { transaction: tx };
      } catch (err) {
        if (err instanceof RefundRevertedError) throw ApplicationFailure.nonRetryable(err.errorName ?? err.message, 'REFUND_REVERTED');
        throw err;
      }
    },

    /** Polls for the receipt at the configured depth, heartbeating; 'dropped' when the node forgot the transaction. */
    async awaitRefundConfirmation(input: RefundWorkflowInput & { transaction: string }): Promise<RefundConfirmation> {
      const ctx = Context.current();
      const conf = await awaitTransaction(chain, input.transaction, deps.settings.confirmations, (p) => ctx.heartbeat(p));
      if (conf.status === 'dropped') deps.metrics?.chain.txDropped.inc({ purpose: 'refund' });
      return conf.status === 'confirmed' ? { status: 'confirmed', transaction: conf.transaction, blockNumber: conf.blockNumber } : conf;
    },

    /**
     * Books a mined refund: the borrower's booked debt falls (and available credit rises) by what the
     * contract's Refunded event says it cleared, once per refund; then the refund is SUCCEEDED.
     */
    async bookRefund(input: RefundWorkflowInput & { transaction: string; blockNumber: string }): Promise<RefundOutcome> {
      const { doc, refund } = await load(input);
      const receipt = await chain.publicClient.getTransactionReceipt({ hash: input.transaction as Hash });
      const nonce = refund.authorization.nonce.toLowerCase();
      const log = refundLogsIn(receipt.logs, chain.deployment.settlement).find((l) => l.nonce.toLowerCase() === nonce);
      if (!log) throw invalid(`transaction ${input.transaction} carries no Refunded event for refund ${refund.refundId}`);
      const debtReduced = log.debtReduced.toString();
      if (log.debtReduced > 0n) await bookRepayment(c, doc.borrowerId, `refund:${refund.refundId}`, Number(log.debtReduced));
      await updateRefund(c, doc._id, refund.refundId, { status: 'SUCCEEDED', transaction: input.transaction, blockNumber: input.blockNumber, debtReduced });
      return { refundId: refund.refundId, status: 'SUCCEEDED', transaction: input.transaction, blockNumber: input.blockNumber, debtReduced };
    },

    /** Records a failed refund (its amount no longer counts against the payment), or announces a successful one. */
    async finishRefund(input: RefundWorkflowInput & { outcome: RefundOutcome }): Promise<void> {
      const o = input.outcome;
      if (o.status === 'FAILED') {
        await updateRefund(c, input.paymentId, input.refundId, {
          status: 'FAILED',
          failureReason: o.failureReason ?? 'failed',
          ...(o.transaction ? { transaction: o.transaction } : {}),
        });
        deps.metrics?.delivery.refunds.inc({ outcome: 'failed' });
        deps.metrics?.workflowFailures.inc({ kind: 'refund' });
        return;
      }
      deps.metrics?.delivery.refunds.inc({ outcome: 'succeeded' });
      const { doc, refund } = await load(input);
      const payment = await findPaymentWithOutcome(c, input.paymentId);
      if (!payment) return;
      const base = toReceipt(payment);
      const receipt = {
        ...base,
        status: 'CONFIRMED' as const,
        batchId: doc.batchId,
        transaction: doc.transaction,
        amountRefunded: refundTotals(doc.refunds).refunded.toString(),
        refunds: doc.refunds.map(refundView),
      };
      const event = refundedEvent(receipt, refundView(refund), refund.updatedAt.toISOString());
      const emitDeps = { c, temporal: deps.temporal, taskQueue: deps.taskQueue, retry: deps.webhooks?.retry ?? DEFAULT_WEBHOOK_RETRY };
      await deliverWebhookEvents(emitDeps, `refund-${refund.refundId}`, new Map([[doc.merchantId, [event]]]));
    },
  };
}

export type RefundActivities = ReturnType<typeof createRefundActivities>;
