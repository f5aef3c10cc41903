import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { RefundActivities, RefundOutcome } from '../activities/refunds.js';
import type { RefundWorkflowInput } from '../src/domain/refunds.js';

const { submitRefund, bookRefund, finishRefund } = proxyActivities<RefundActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2, nonRetryableErrorTypes: ['REFUND_REVERTED', 'REFUND_INVALID'] },
});

const { awaitRefundConfirmation } = proxyActivities<RefundActivities>({
  startToCloseTimeout: '6 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

const MAX_SUBMISSIONS = 3;

/**
 * One refund of a CONFIRMED payment, from broadcast to booking: submit refundWithAuthorization
 * from the settler, wait for the confirmations, lower the borrower's booked debt by what the
 * contract cleared, then announce payment.refunded. A refund that cannot be mined ends FAILED and
 * its amount stops counting against the payment.
 */
export async function refundWorkflow(input: RefundWorkflowInput): Promise<RefundOutcome> {
  let outcome: RefundOutcome = { refundId: input.refundId, status: 'FAILED', failureReason: 'transaction_dropped' };
  try {
    for (let attempt = 0; attempt < MAX_SUBMISSIONS; attempt++) {
      const sent = await submitRefund(input);
      const conf = await awaitRefundConfirmation({ ...input, transaction: sent.transaction });
      if (conf.status === 'dropped') continue;
      if (conf.status === 'reverted') {
        outcome = { refundId: input.refundId, status: 'FAILED', transaction: conf.transaction, failureReason: 'transaction_reverted' };
        break;
      }
      outcome = await bookRefund({ ...input, transaction: conf.transaction, blockNumber: conf.blockNumber });
      break;
    }
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (!(cause instanceof ApplicationFailure && cause.nonRetryable)) throw err;
    outcome = { refundId: input.refundId, status: 'FAILED', failureReason: cause.type === 'REFUND_REVERTED' ? `reverted: ${cause.message}` : cause.message };
  }
  await finishRefund({ ...input, outcome });
  return outcome;
}
