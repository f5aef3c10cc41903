import { ApplicationFailure } from '@temporalio/activity';
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
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  return {
    /** One signed POST; throws (and is retried) until the endpoint answers 2xx. A deleted endpoint is skipped. */
    async deliverWebhook(input: { endpointId: string; event: WebhookEvent }): Promise<'delivered' | 'endpoint_deleted'> {
      const endpoint = await findWebhookEndpoint(deps.store.c, input.endpointId);
      if (!endpoint) return 'endpoint_deleted';
      try {
        const { allowPrivate, allowLoopback, secrets } = deps.webhooks;
        await deliverWebhookEvent(endpoint, input.event, { allowPrivate, allowLoopback, secrets });
        return 'delivered';
      } catch (err) {
        if (err instanceof WebhookRefusedError) {
          throw ApplicationFailure.nonRetryable(err.message, 'WebhookRefusedError');
        }
        throw err;
      }
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
