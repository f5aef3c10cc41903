import { createPaymentActivities, type PaymentActivityDeps } from './payments.js';
import { createSettlementActivities, type SettlementActivityDeps } from './settlement.js';

export function createActivities(deps: PaymentActivityDeps & SettlementActivityDeps) {
  return { ...createPaymentActivities(deps), ...createSettlementActivities(deps) };
}
