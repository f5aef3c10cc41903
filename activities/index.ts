import { createPaymentActivities, type PaymentActivityDeps } from './legacy/payments.js';
import { createSettlementActivities, type SettlementActivityDeps } from './legacy/settlement.js';
import { createShardActivities } from './settlement-shard.js';
import { createOnboardingActivities } from './onboarding.js';
import { createRepaymentActivities } from './repayment.js';
import { createRefundActivities } from './refunds.js';
import { createCaptureActivities } from './captures.js';
import { AcceptedCaptures } from '../src/settlement/accepted-captures.js';
import { createWebhookActivities, type WebhookActivityDeps } from './webhooks.js';

/** Webhook delivery settings (WEBHOOK_* in the environment). */
export interface WebhookSettings {
  webhooks: WebhookActivityDeps['webhooks'] & { retry: { initialMs: number; maxMs: number } };
}

export function createActivities(deps: PaymentActivityDeps & SettlementActivityDeps & WebhookSettings & { shards: number; onBacklog?: (shard: number, pending: number) => void }) {
  const accepted = new AcceptedCaptures();
  return {
    ...createPaymentActivities(deps),
    ...createSettlementActivities(deps),
    ...createShardActivities({ ...deps, accepted }),
    ...createOnboardingActivities(deps),
    ...createRepaymentActivities(deps),
    ...createRefundActivities(deps),
    ...createCaptureActivities({ ...deps, accepted }),
    ...createWebhookActivities(deps),
  };
}
