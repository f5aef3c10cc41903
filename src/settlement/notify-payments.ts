import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { PaymentOutcome } from '../domain/payment.js';
import type { SettlementQueueDoc } from '../store/documents.js';
import { PAYMENT_WORKFLOW_TYPE, paymentSettledSignal, type PaymentWorkflowInput } from '../temporal/definitions.js';
import { paymentWorkflowStartOptions } from '../temporal/start-payment.js';
import { inTraceOf } from '../observability/tracing.js';

const IN_FLIGHT = 32;

/** When the i-th of n notifications may start, in ms after the first: evenly over `spreadMs`. */
export function notifyOffsetMs(i: number, n: number, spreadMs: number): number {
  return n <= 1 ? 0 : Math.floor((i * spreadMs) / n);
}

/**
 * Tells each payment workflow of a batch how the batch ended, so every capture ends with its workflow.
 * The signals go out evenly over `spreadMs`: each starts a workflow task, and a whole batch's at
 * once took both cores for most of a second, stalling the captures that arrived meanwhile. Polls
 * do not wait for them: they read the batch's recorded state, written before.
 */
export async function notifyPayments(
  client: Client,
  taskQueue: string,
  entries: readonly SettlementQueueDoc[],
  outcome: PaymentOutcome,
  pace: { spreadMs: number } = { spreadMs: 0 },
): Promise<void> {
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const i = next++;
      const wait = started + notifyOffsetMs(i, entries.length, pace.spreadMs) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await notifyOne(client, taskQueue, entries[i] as SettlementQueueDoc, outcome);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, entries.length) }, worker));
}

/**
 * Signal-with-start, not a plain signal: a payment workflow started with its first task delayed
 * only runs when a signal-with-start reaches it (a plain signal waits for the delay to end). It
 * also starts the workflow when its start was lost; a closed one (a repeated notice) is left alone.
 * A running execution of an older payment workflow type gets the signal all the same: the server
 * matches a running workflow by id, whatever its type.
 */
export async function notifyOne(client: Client, taskQueue: string, e: SettlementQueueDoc, outcome: PaymentOutcome): Promise<void> {
  const input: PaymentWorkflowInput = {
    paymentId: e._id,
    merchantId: e.merchantId,
    borrowerId: e.borrowerId,
    spendIntentId: e.spendIntentId,
    payTo: e.payTo,
    amount: e.amount,
    ...e.workflow,
    queued: true,
  };
  const attributes = { 'x402.payment.id': e._id, 'x402.payment.status': outcome.status };
  await inTraceOf(e.traceparent, 'settlement.notify_payment', { attributes }, async () => {
    try {
      await client.workflow.signalWithStart(PAYMENT_WORKFLOW_TYPE, {
        ...paymentWorkflowStartOptions(taskQueue, input),
        signal: paymentSettledSignal,
        signalArgs: [outcome],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  });
}
