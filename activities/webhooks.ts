import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { attemptLabel, type WebhookOutcome } from '../src/observability/delivery-metrics.js';
import type { WorkerMetrics } from '../src/observability/metrics.js';
import type { WebhookEvent } from '../src/domain/webhook-events.js';
import type { Store } from '../src/store/mongo.js';
import type { SecretBox } from '../src/store/secret-box.js';
import { findWebhookEndpoint } from '../src/store/webhook-endpoints.js';
import { attemptRecord, type AttemptFacts } from '../src/webhooks/attempt-record.js';
import { deliverWebhookEvent, WebhookAnsweredError, WebhookRefusedError } from '../src/webhooks/deliver.js';
import { openDelivery, recordAttempt } from '../src/webhooks/delivery-log.js';
import type { WebhookDestinationPolicy } from '../src/webhooks/url-policy.js';

export interface WebhookActivityDeps {
  store: Store;
  /** secrets opens the endpoints' sealed signing secrets (src/store/secret-box.ts). */
  webhooks: WebhookDestinationPolicy & { secrets: Pick<SecretBox, 'open'> };
  metrics?: WorkerMetrics;
}

/** Temporal's retry policy of this attempt, for the log's next retry time. */
function retryOf(info: Context['info']): AttemptFacts['retry'] {
  const p = info.retryPolicy;
  if (!p?.initialInterval) return undefined;
  const ms = (d: unknown) => (typeof d === 'number' ? d : undefined);
  const initialMs = ms(p.initialInterval);
  if (initialMs === undefined) return undefined;
  return {
    initialMs,
    coefficient: p.backoffCoefficient ?? 2,
    maxMs: ms(p.maximumInterval) ?? initialMs * 100,
    ...(info.scheduleToCloseTimeoutMs ? { deadlineMs: info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs } : {}),
  };
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  return {
    /**
     * One signed POST; throws (and is retried) until the endpoint answers 2xx. A deleted endpoint is
     * skipped. Each attempt is recorded in the endpoint's delivery log; the workflow is unchanged.
     */
    async deliverWebhook(input: { endpointId: string; event: WebhookEvent }): Promise<'delivered' | 'endpoint_deleted'> {
      const count = (outcome: WebhookOutcome) => deps.metrics?.delivery.webhookDeliveries.inc({ outcome, attempt: attemptLabel(Context.current().info.attempt) });
      const endpoint = await findWebhookEndpoint(deps.store.c, input.endpointId);
      if (!endpoint) {
        count('endpoint_deleted');
        return 'endpoint_deleted';
      }
      const info = Context.current().info;
      const delivery = await openDelivery(deps.store.c, endpoint, info.workflowExecution?.workflowId ?? `activity-${info.activityId}`, input.event, new Date());
      const started = performance.now();
      const record = async (facts: Omit<AttemptFacts, 'attempt' | 'at' | 'latencyMs' | 'retry'>) => {
        // The delivery's outcome does not wait on its log: a store hiccup here must not send it again.
        await recordAttempt(deps.store.c, delivery._id, attemptRecord({ ...facts, attempt: info.attempt, at: new Date(), latencyMs: performance.now() - started, retry: retryOf(info) })).catch(
          (err: unknown) => log.warn('webhook delivery log not written', { deliveryId: delivery._id, error: String(err) }),
        );
      };
      try {
        const { allowPrivate, allowLoopback, secrets } = deps.webhooks;
        const statusCode = await deliverWebhookEvent(endpoint, input.event, { allowPrivate, allowLoopback, secrets });
        count('delivered');
        await record({ delivered: true, refused: false, statusCode });
        return 'delivered';
      } catch (err) {
        const refused = err instanceof WebhookRefusedError;
        count(refused ? 'refused' : 'failed');
        await record({
          delivered: false,
          refused,
          ...(err instanceof WebhookAnsweredError ? { statusCode: err.status } : {}),
          error: err instanceof Error ? err.message : String(err),
        });
        if (refused) throw ApplicationFailure.nonRetryable(err.message, 'WebhookRefusedError');
        throw err;
      }
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
