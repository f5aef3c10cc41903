import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import { PAYMENT_WORKFLOW_TYPE, type PaymentWorkflowInput } from './definitions.js';
import { BorrowerIdKey, MerchantIdKey, OrderRefKey, PaymentStatusKey } from './search-attributes.js';

/** How a payment workflow is started, by the API after capture or by its shard if that start was lost. */
export function paymentWorkflowStartOptions(taskQueue: string, input: PaymentWorkflowInput) {
  return {
    workflowId: input.paymentId,
    taskQueue,
    args: [input] as [PaymentWorkflowInput],
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: [
      { key: MerchantIdKey, value: input.merchantId },
      { key: BorrowerIdKey, value: input.borrowerId },
      { key: PaymentStatusKey, value: 'QUEUED' },
      // A queue entry written before orderRef was carried has none: the attribute is left unset.
      ...(input.orderRef ? [{ key: OrderRefKey, value: input.orderRef }] : []),
    ],
  } satisfies Partial<WorkflowStartOptions>;
}

/**
 * A payment workflow has nothing to do until its batch ends, so its first workflow task waits for
 * the settlement signal: started with a start delay, it is one history event and costs no worker
 * until its shard's signal-with-start (notifyOne) dispatches the task that ends it. Were it never
 * signalled, it would wake when the delay ends and wait for the signal as any workflow would.
 */
export const PAYMENT_FIRST_TASK_DELAY = '1 day';

/** Starts the payment workflow keyed by paymentId. A second start of the same payment is a no-op. */
export async function startPaymentWorkflow(client: Client, taskQueue: string, input: PaymentWorkflowInput): Promise<void> {
  try {
    await client.workflow.start(PAYMENT_WORKFLOW_TYPE, {
      ...paymentWorkflowStartOptions(taskQueue, input),
      workflowIdConflictPolicy: 'USE_EXISTING',
      startDelay: PAYMENT_FIRST_TASK_DELAY,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
}
