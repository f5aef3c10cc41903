import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { RepaymentActivities } from '../activities/repayment.js';
import type { RepaymentOutcome, RepaymentWorkflowInput } from '../src/temporal/agent-definitions.js';

const { submitRepayment, bookRepayment, finishRepayment } = proxyActivities<RepaymentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2, nonRetryableErrorTypes: ['REPAYMENT_REVERTED', 'REPAYMENT_INVALID'] },
});

const { awaitRepaymentConfirmation } = proxyActivities<RepaymentActivities>({
  startToCloseTimeout: '6 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

const MAX_SUBMISSIONS = 3;

/**
 * A signed repayment, from broadcast to booking: submit repayWithAuthorization from the settler,
 * wait for the confirmations, then lower the booked debt and restore available credit.
 */
export async function repaymentWorkflow(input: RepaymentWorkflowInput): Promise<RepaymentOutcome> {
  const { repaymentId } = input;
  let outcome: RepaymentOutcome = { repayment_id: repaymentId, status: 'FAILED', failure_reason: 'transaction_dropped' };
  try {
    for (let attempt = 0; attempt < MAX_SUBMISSIONS; attempt++) {
      const sent = await submitRepayment({ repaymentId });
      const conf = await awaitRepaymentConfirmation({ repaymentId, transaction: sent.transaction });
      if (conf.status === 'dropped') continue;
      if (conf.status === 'reverted') {
        outcome = { repayment_id: repaymentId, status: 'FAILED', transaction: conf.transaction, failure_reason: 'transaction_reverted' };
        break;
      }
      outcome = await bookRepayment({ repaymentId, transaction: conf.transaction, blockNumber: conf.blockNumber });
      break;
    }
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (!(cause instanceof ApplicationFailure && cause.nonRetryable)) throw err;
    outcome = { repayment_id: repaymentId, status: 'FAILED', failure_reason: cause.type === 'REPAYMENT_REVERTED' ? `reverted: ${cause.message}` : cause.message };
  }
  await finishRepayment({ repaymentId, outcome });
  return outcome;
}
