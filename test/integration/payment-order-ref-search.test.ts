import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { devBorrowerCreate, devVoucher } from '../../tools/cli/dev-commands.js';
import { PAYMENT_WORKFLOW_TYPE } from '../../src/temporal/definitions.js';
import { capture, newMerchant, world, type World } from '../helpers/world.js';

/** The workflow ids a visibility query answers, once it answers any (visibility trails the start by a moment). */
async function listed(w: World, query: string, timeoutMs = 20_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ids: string[] = [];
    for await (const wf of w.temporal.workflow.list({ query })) ids.push(wf.workflowId);
    if (ids.length > 0 || Date.now() > deadline) return ids;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('temporal: the OrderRef search attribute on payment workflows', function () {
  this.timeout(120_000);

  it("finds an order's payment workflow by OrderRef (and the merchant's by MerchantId)", async function () {
    const w = await world();
    const m = await newMerchant(w, 'OrderRef Shop');
    const b = await devBorrowerCreate(w.cli, { credit: '100000000' });
    const orderRef = `order-${randomUUID()}`;
    const v = await devVoucher(w.cli, { merchant: m.merchantId, borrower: b.borrowerId, agent: b.operationalAgentId, agentPrivateKey: b.agentPrivateKey as string, amount: '1000', orderRef });
    const res = await capture(w, m, v.captureBody);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const paymentId = res.json.receipt.paymentId as string;

    assert.deepEqual(await listed(w, `WorkflowType = '${PAYMENT_WORKFLOW_TYPE}' AND OrderRef = '${orderRef}'`), [paymentId]);
    assert.deepEqual(await listed(w, `WorkflowType = '${PAYMENT_WORKFLOW_TYPE}' AND MerchantId = '${m.merchantId}'`), [paymentId]);
    assert.deepEqual(await listed(w, `OrderRef = 'order-${randomUUID()}'`, 1_000), [], 'another order finds nothing');
  });
});
