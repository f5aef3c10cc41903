export { paymentWorkflow } from './payment.js';
export { batcherWorkflow } from './batcher.js';
