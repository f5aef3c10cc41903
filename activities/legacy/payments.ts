import type { WorkerMetrics } from '../../src/observability/metrics.js';
import type { Client } from '@temporalio/client';
import type { PaymentState } from '../../src/domain/payment.js';
import { convertHoldToDebt, releaseHold } from '../../src/store/borrowers.js';
import type { Store } from '../../src/store/mongo.js';
import { updatePaymentProjection } from '../../src/store/payments.js';
import { BATCHER_WORKFLOW_ID, enqueuePaymentSignal } from '../../src/temporal/definitions.js';

export interface PaymentActivityDeps {
  store: Store;
  temporal: Client;
  taskQueue: string;
  metrics?: WorkerMetrics;
}

export function createPaymentActivities(deps: PaymentActivityDeps) {
  return {
    /** Signal-with-start: the batcher exists after this, and de-duplicates a repeated enqueue. */
    async enqueueForSettlement(input: { paymentId: string }): Promise<void> {
      await deps.temporal.workflow.signalWithStart('batcherWorkflow', {
        workflowId: BATCHER_WORKFLOW_ID,
        taskQueue: deps.taskQueue,
        args: [{ queue: [] }],
        signal: enqueuePaymentSignal,
        signalArgs: [{ paymentId: input.paymentId }],
      });
    },

    async recordPaymentProjection(input: { paymentId: string; state: PaymentState }): Promise<void> {
      const s = input.state;
      const moveBack = s.status === 'QUEUED';
      await updatePaymentProjection(
        deps.store.c,
        input.paymentId,
        {
          status: s.status,
          ...(s.batchId ? { batchId: s.batchId } : {}),
          ...(s.transaction ? { transaction: s.transaction } : {}),
          ...(s.blockNumber ? { blockNumber: s.blockNumber } : {}),
          ...(s.confirmedAt ? { confirmedAt: new Date(s.confirmedAt) } : {}),
          ...(s.failureReason ? { failureReason: s.failureReason } : {}),
        },
        moveBack ? ['transaction', 'blockNumber'] : [],
      );
    },

    async bookConfirmedCredit(input: { borrowerId: string; holdId: string }): Promise<void> {
      await convertHoldToDebt(deps.store.c, input.borrowerId, input.holdId);
    },

    /** Called when a payment ends FAILED: its reserved credit goes back. */
    async releaseCredit(input: { borrowerId: string; holdId: string }): Promise<void> {
      const released = await releaseHold(deps.store.c, input.borrowerId, input.holdId);
      if (released) deps.metrics?.workflowFailures.inc({ kind: 'payment' });
    },
  };
}

export type PaymentActivities = ReturnType<typeof createPaymentActivities>;
