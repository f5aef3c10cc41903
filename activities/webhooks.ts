import { ApplicationFailure, Context } from '@temporalio/activity';
import { attemptLabel, type WebhookOutcome } from '../src/observability/delivery-metrics.js';
import type { WorkerMetrics } from '../src/observability/metrics.js';
import type { WebhookEvent } from '../src/domain/webhook-events.js';
import type { Store } from '../src/store/mongo.js';
import type { SecretBox } from '../src/store/secret-box.js';
import { findWebhookEndpoint } from '../src/store/webhook-endpoints.js';
import { deliverWebhookEvent, WebhookRefusedError } from '../src/webhooks/deliver.js';
import type { WebhookDestinationPolicy } from '../src/webhooks/url-policy.js';

export interface WebhookActivityDeps {
  store: Store;
  /** secrets opens the endpoints' sealed signing secrets (src/store/secret-box.ts). */
  webhooks: WebhookDestinationPolicy & { secrets: Pick<SecretBox, 'open'> };
  metrics?: WorkerMetrics;
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  return {
    /** One signed POST; throws (and is retried) until the endpoint answers 2xx. A deleted endpoint is skipped. */
    async deliverWebhook(input: { endpointId: string; event: WebhookEvent }): Promise<'delivered' | 'endpoint_deleted'> {
      const count = (outcome: WebhookOutcome) => deps.metrics?.delivery.webhookDeliveries.inc({ outcome, attempt: attemptLabel(Context.current().info.attempt) });
      const endpoint = await findWebhookEndpoint(deps.store.c, input.endpointId);
      if (!endpoint) {
        count('endpoint_deleted');
        return 'endpoint_deleted';
      }
      try {
        const { allowPrivate, allowLoopback, secrets } = deps.webhooks;
        await deliverWebhookEvent(endpoint, input.event, { allowPrivate, allowLoopback, secrets });
        count('delivered');
        return 'delivered';
      } catch (err) {
        if (err instanceof WebhookRefusedError) {
          count('refused');
          throw ApplicationFailure.nonRetryable(err.message, 'WebhookRefusedError');
        }
        count('failed');
        throw err;
      }
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
