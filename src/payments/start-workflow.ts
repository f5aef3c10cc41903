import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { PaymentWorkflowInput } from '../../workflows/definitions.js';
import { BorrowerIdKey, MerchantIdKey, PaymentStatusKey } from '../temporal/search-attributes.js';

/** Starts the payment workflow keyed by paymentId. A second start of the same payment is a no-op. */
export async function startPaymentWorkflow(client: Client, taskQueue: string, input: PaymentWorkflowInput): Promise<void> {
  try {
    await client.workflow.start('paymentWorkflow', {
      workflowId: input.paymentId,
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: MerchantIdKey, value: input.merchantId },
        { key: BorrowerIdKey, value: input.borrowerId },
        { key: PaymentStatusKey, value: 'QUEUED' },
      ],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
}
