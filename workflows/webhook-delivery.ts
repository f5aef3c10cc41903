import { proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks.js';
import type { WebhookDeliveryInput } from '../src/temporal/webhook-definitions.js';

export type { WebhookDeliveryInput };

/**
 * Delivers events to one merchant endpoint, in order, each retried with exponential backoff for
 * up to 3 days (at least once: the receiver deduplicates on the event id). One run per endpoint
 * and batch (id `webhook-<endpointId>-<batchId>`), visible in the Temporal UI; it never holds up
 * settlement, which ended before it started.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<{ delivered: number; skipped: number }> {
  const { deliverWebhook } = proxyActivities<WebhookActivities>({
    startToCloseTimeout: '30 seconds',
    scheduleToCloseTimeout: '3 days',
    retry: { initialInterval: input.retry.initialMs, backoffCoefficient: 2, maximumInterval: input.retry.maxMs, nonRetryableErrorTypes: ['WebhookRefusedError'] },
  });
  let delivered = 0;
  let skipped = 0;
  for (const event of input.events) {
    const outcome = await deliverWebhook({ endpointId: input.endpointId, event });
    if (outcome === 'delivered') delivered++;
    else skipped++;
  }
  return { delivered, skipped };
}
