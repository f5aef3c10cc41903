import { Counter, type Registry } from 'prom-client';

export const WEBHOOK_OUTCOMES = ['delivered', 'failed', 'refused', 'endpoint_deleted'] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];
const ATTEMPT_LABELS = ['1', '2', '3', '4', '5+'] as const;

/** The attempt label: 1 to 4, then `5+`, so a delivery retried for days adds no series. */
export const attemptLabel = (attempt: number): string => (attempt >= 5 ? '5+' : String(Math.max(1, Math.floor(attempt))));

/** What reaches merchants and borrowers after settlement: webhook deliveries, refunds, repayments. */
export function deliveryMetrics(registry: Registry) {
  const m = {
    webhookDeliveries: new Counter({
      name: 'x402_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (delivered, failed: retried later, refused: not retried, endpoint_deleted) and attempt (1-4, 5+)',
      labelNames: ['outcome', 'attempt'],
      registers: [registry],
    }),
    refunds: new Counter({ name: 'x402_refunds_total', help: 'Refunds ended, by outcome (succeeded, failed)', labelNames: ['outcome'], registers: [registry] }),
    repayments: new Counter({ name: 'x402_repayments_total', help: 'Repayments ended, by outcome (confirmed, failed)', labelNames: ['outcome'], registers: [registry] }),
  };
  for (const outcome of WEBHOOK_OUTCOMES) for (const attempt of ATTEMPT_LABELS) m.webhookDeliveries.inc({ outcome, attempt }, 0);
  for (const outcome of ['succeeded', 'failed']) m.refunds.inc({ outcome }, 0);
  for (const outcome of ['confirmed', 'failed']) m.repayments.inc({ outcome }, 0);
  return m;
}
export type DeliveryMetrics = ReturnType<typeof deliveryMetrics>;
