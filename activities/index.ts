import { createPaymentActivities, type PaymentActivityDeps } from './payments.js';
import { createSettlementActivities, type SettlementActivityDeps } from './settlement.js';
import { createOnboardingActivities } from './onboarding.js';
import { createRepaymentActivities } from './repayment.js';
import { createCaptureActivities } from './captures.js';

export function createActivities(deps: PaymentActivityDeps & SettlementActivityDeps) {
  return {
    ...createPaymentActivities(deps),
    ...createSettlementActivities(deps),
    ...createOnboardingActivities(deps),
    ...createRepaymentActivities(deps),
    ...createCaptureActivities(deps),
  };
}
