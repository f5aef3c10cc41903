import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { capturePayment } from '../../src/payments/capture.js';
import { paymentWorkflowStartOptions, PAYMENT_FIRST_TASK_DELAY } from '../../src/temporal/start-payment.js';
import type { PaymentDoc } from '../../src/store/documents.js';
import type { PaymentState } from '../../src/domain/payment.js';
import { PAYMENT_WORKFLOW_TYPE } from '../../src/temporal/definitions.js';
import { agentDeps } from '../helpers/onboarding.js';
import { settledEvents } from '../helpers/settlement-evidence.js';
import { call, newBorrower, newMerchant, newVoucher, pollUntil, world, type World } from '../helpers/world.js';

/**
 * Releases before paymentWorkflowV2 started every payment as `paymentWorkflow`. After a deploy,
 * those executions are still waiting for their batch: this release's shard settles them with a
 * signal-with-start of the new type, which must reach the running old execution (matched by id)
 * and finish it, never start a second workflow or settle the payment twice. Replay of the old
 * type's recorded histories is test/unit/workflow-replay.test.ts; this is the live half.
 */
describe('deploy: payments started by the previous release as paymentWorkflow settle exactly once under this one', function () {
  this.timeout(180_000);
  let w: World;
  before(async function () {
    w = await world();
  });

  it('old-type executions in flight and new captures beside them each end CONFIRMED once, each in its own type', async function () {
    const m = await newMerchant(w);
    const b = await newBorrower(w);
    const taskQueue = w.env.TEMPORAL_TASK_QUEUE ?? 'credit-facilitator';
    // The previous release's API: the same capture, then a delayed start of the type it knew.
    const started: Promise<unknown>[] = [];
    const previousRelease = {
      ...(await agentDeps(w)),
      captureFinisher: {
        submit(doc: PaymentDoc) {
          const input = { paymentId: doc._id, merchantId: doc.merchantId, borrowerId: doc.borrowerId, spendIntentId: doc.spendIntentId, payTo: doc.payTo, amount: doc.amount, asset: doc.asset, network: doc.network, orderRef: doc.orderRef, capturedAt: doc.capturedAt.toISOString(), queued: true };
          started.push(w.temporal.workflow.start('paymentWorkflow', { ...paymentWorkflowStartOptions(taskQueue, input), startDelay: PAYMENT_FIRST_TASK_DELAY }));
        },
      },
    };
    const oldVouchers = await Promise.all([0, 1, 2].map((i) => newVoucher(w, m, b, String(300 + i), { orderRef: `upgrade-old-${i}` })));
    const oldIds: string[] = [];
    for (const v of oldVouchers) {
      const { receipt } = await capturePayment(previousRelease, { merchantId: m.merchantId, idempotencyKey: randomUUID(), body: v.captureBody });
      oldIds.push(receipt.paymentId);
    }
    await Promise.all(started);
    const newVoucher1 = await newVoucher(w, m, b, '310', { orderRef: 'upgrade-new' });
    const fresh = await call(w, 'POST', '/facilitator/capture', { token: m.apiKey, idempotencyKey: randomUUID(), body: newVoucher1.captureBody });
    assert.equal(fresh.status, 200, JSON.stringify(fresh.json));
    const newId = fresh.json.receipt.paymentId as string;

    await Promise.all([...oldIds, newId].map((id) => pollUntil(w, m, id, 'CONFIRMED', 120_000)));
    for (const id of [...oldIds, newId]) {
      const handle = w.temporal.workflow.getHandle(id);
      // A poll says CONFIRMED from the batch's record; the workflow's signal may follow a moment later.
      assert.equal(((await handle.result()) as PaymentState).status, 'CONFIRMED');
      const d = await handle.describe();
      assert.equal(d.type, oldIds.includes(id) ? 'paymentWorkflow' : PAYMENT_WORKFLOW_TYPE, `${id}: finished in the type it was started as`);
      assert.equal(d.status.name, 'COMPLETED');
      const runs: string[] = [];
      for await (const run of w.temporal.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(run.runId);
      assert.equal(runs.length, 1, `${id}: one workflow execution, not a second one of the new type`);
      assert.equal((await settledEvents(w, { paymentId: id })).length, 1, `${id}: settled on-chain exactly once`);
    }
  });
});
