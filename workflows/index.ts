export { paymentWorkflow, paymentWorkflowV2 } from './payment.js';
export { batcherWorkflow } from './legacy/batcher.js';
export { onboardingWorkflow } from './onboarding.js';
export { spendIntentWorkflow } from './spend-intent.js';
export { repaymentWorkflow } from './repayment.js';
export { captureSweeperWorkflow } from './capture-sweeper.js';
export { settlementShardWorkflow } from './settlement-shard.js';
export { webhookDeliveryWorkflow } from './webhook-delivery.js';
export { refundWorkflow } from './refund.js';
