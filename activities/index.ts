import { createPaymentActivities, type PaymentActivityDeps } from './payments.js';
import { createSettlementActivities, type SettlementActivityDeps } from './settlement.js';
import { createShardActivities } from './settlement-shard.js';
import { createOnboardingActivities } from './onboarding.js';
import { createRepaymentActivities } from './repayment.js';
import { createCaptureActivities } from './captures.js';
import { AcceptedCaptures } from './accepted-captures.js';

export function createActivities(deps: PaymentActivityDeps & SettlementActivityDeps & { shards: number }) {
  const accepted = new AcceptedCaptures();
  return {
    ...createPaymentActivities(deps),
    ...createSettlementActivities(deps),
    ...createShardActivities({ ...deps, accepted }),
    ...createOnboardingActivities(deps),
    ...createRepaymentActivities(deps),
    ...createCaptureActivities({ ...deps, accepted }),
  };
}
