import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { WebhookDeliveryInput } from '../temporal/webhook-definitions.js';

/** Starts one delivery workflow; false when a run of that id already exists (it delivers, not this call). */
export async function startDeliveryWorkflow(temporal: Client, taskQueue: string, workflowId: string, merchantId: string, input: WebhookDeliveryInput): Promise<boolean> {
  try {
    await temporal.workflow.start('webhookDeliveryWorkflow', {
      taskQueue,
      workflowId,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      searchAttributes: { MerchantId: [merchantId] },
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
