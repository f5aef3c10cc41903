import assert from 'node:assert/strict';
import { WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { capturePayment } from '../../src/payments/capture.js';
import { agentDeps } from '../helpers/onboarding.js';
import { call, newBorrower, newMerchant, newVoucher, pollUntil, world, paymentSettledEvent, type World } from '../helpers/world.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { until } from '../helpers/until.js';

describe('capture: a workflow start lost after the answer is finished by the sweeper', function () {
  this.timeout(120_000);
  let w: World;
  before(async function () {
    w = await world();
  });

  it('a payment accepted by an API that died before starting its workflow still settles exactly once', async function () {
    const m = await newMerchant(w);
    const b = await newBorrower(w);
    const v = await newVoucher(w, m, b, '4242');
    // The API answered 200 and died before its background start ran: a finisher that never starts anything.
    const crashed = { ...(await agentDeps(w)), captureFinisher: { submit() {} } };
    const { receipt } = await capturePayment(crashed, { merchantId: m.merchantId, idempotencyKey: randomUUID(), body: v.captureBody });
    assert.equal(receipt.status, 'QUEUED');

    const stored = await w.store.c.payments.findOne({ _id: receipt.paymentId });
    assert.equal(stored?.status, 'CAPTURING', 'the workflow was never started by the API');
    const poll = await call(w, 'GET', `/facilitator/payments/${receipt.paymentId}`, { token: m.apiKey });
    assert.equal(poll.status, 200, JSON.stringify(poll.json));
    assert.equal(poll.json.status, 'QUEUED', 'an accepted payment is QUEUED while its workflow starts');

    const confirmed = await pollUntil(w, m, receipt.paymentId, 'CONFIRMED', 90_000);
    assert.ok(confirmed.transaction);
    const logs = await w.publicClient.getLogs({ address: w.settlement, event: paymentSettledEvent, args: { paymentId: uuidToBytes32(receipt.paymentId) }, fromBlock: 0n });
    assert.equal(logs.length, 1, 'settled exactly once');
    // CONFIRMED shows from the batch's record, written before the batch end's signal-with-starts,
    // which go out over SETTLEMENT_NOTIFY_SPREAD_MS: the workflow may start just after the poll saw it.
    const handle = w.temporal.workflow.getHandle(receipt.paymentId);
    const started = () => handle.describe().catch((err: unknown) => (err instanceof WorkflowNotFoundError ? null : Promise.reject(err)));
    const history = await until('the payment workflow started', started, (d) => d !== null, 30_000);
    assert.equal(history?.workflowId, receipt.paymentId);
  });
});
