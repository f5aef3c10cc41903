import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { PAYMENT_WORKFLOW_TYPES } from '../../src/temporal/definitions.js';
import { paymentSettledEvent, type World } from './world.js';

/** Every PaymentSettled log on the settlement contract since deployment for this payment or merchant. */
export async function settledEvents(w: World, filter: { paymentId?: string; merchantId?: string }) {
  return w.publicClient.getLogs({
    address: w.settlement,
    event: paymentSettledEvent,
    args: {
      ...(filter.paymentId ? { paymentId: uuidToBytes32(filter.paymentId) } : {}),
      ...(filter.merchantId ? { merchantId: uuidToBytes32(filter.merchantId) } : {}),
    },
    fromBlock: BigInt(w.env.DEPLOY_BLOCK ?? '0'),
    toBlock: 'latest',
  });
}

/** The payment workflows Temporal knows for a merchant (by the MerchantId search attribute). */
export async function paymentWorkflowsOf(w: World, merchantId: string) {
  const out = [];
  for await (const wf of w.temporal.workflow.list({ query: `(${PAYMENT_WORKFLOW_TYPES.map((t) => `WorkflowType = '${t}'`).join(' OR ')}) AND MerchantId = '${merchantId}'` })) out.push(wf);
  return out;
}
