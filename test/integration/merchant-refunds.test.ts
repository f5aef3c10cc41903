import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { refundLogsIn } from '../../src/chain/refund.js';
import { paymentsExport, paymentsReconcile } from '../../tools/cli/payment-commands.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { findBorrower } from '../../src/store/borrowers.js';
import { reserveRefund } from '../../src/store/refunds.js';
import { refund, refundUntil, signedRefund } from '../helpers/refunds.js';
import { until } from '../helpers/until.js';
import { call, capture, erc20BalanceOf, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, type TestBorrower, type TestMerchant, type World, world } from '../helpers/world.js';

describe('merchant: refunds of CONFIRMED payments', function () {
  this.timeout(300_000);
  let w: World;
  let m: TestMerchant;
  let b: TestBorrower;
  const paid: string[] = [];
  const startedAt = new Date(Date.now() - 60_000);

  const debtOf = (borrowerId: string) =>
    w.publicClient.readContract({ address: w.settlement, abi: creditSettlementAbi, functionName: 'debtOf', args: [uuidToBytes32(borrowerId) as Hex] });
  const balanceOf = (who: Hex) => w.publicClient.readContract({ address: w.asset, abi: [erc20BalanceOf], functionName: 'balanceOf', args: [who] });

  before(async function () {
    w = await world();
    [m, b] = await Promise.all([newMerchant(w, 'Refund merchant', { rateLimits: UNTHROTTLED }), newBorrower(w)]);
    for (const amount of ['5000', '5000']) {
      const v = await newVoucher(w, m, b, amount);
      const res = await capture(w, m, v.captureBody, v.idempotencyKey);
      assert.equal(res.status, 200, JSON.stringify(res.json));
      paid.push(res.json.receipt.paymentId as string);
    }
    for (const id of paid) await pollUntil(w, m, id, 'CONFIRMED', 120_000);
  });

  it('a partial and then a full refund lower the on-chain debt by exactly the refunded sum; a third is refused', async function () {
    const [p] = paid as [string];
    const debt0 = await debtOf(b.borrowerId);
    // A poll says CONFIRMED from the confirmation's batch record; the batch end books the debt a moment later.
    const booked0 = await until('debt booked', async () => (await findBorrower(w.store.c, b.borrowerId))!.debt, (d) => d === Number(debt0), 30_000);
    const payout0 = await balanceOf(m.payoutAddress);
    const hook = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url: 'https://127.0.0.1:9/refunds' } });
    assert.equal(hook.status, 201, JSON.stringify(hook.json));

    const first = await signedRefund(w, m, p, '2000');
    const key = randomUUID();
    const r1 = await refund(w, m, p, first, key);
    assert.equal(r1.status, 202, JSON.stringify(r1.json));
    assert.equal(r1.json.refund.status, 'PENDING');
    const refund1 = r1.json.refund.refundId as string;

    const again = await refund(w, m, p, first, key);
    assert.equal(again.status, 202);
    assert.equal(again.json.replayed, true);
    assert.equal(again.json.refund.refundId, refund1, 'the same key and body replay the first refund');
    const reused = await refund(w, m, p, first);
    assert.equal(reused.status, 409, JSON.stringify(reused.json));
    assert.equal(reused.json.error.code, 'REFUND_AUTHORIZATION_USED', 'one signed authorization is one refund');
    const otherBody = await refund(w, m, p, { ...first, amount: '1999' }, key);
    assert.equal(otherBody.json.error.code, 'IDEMPOTENCY_KEY_CONFLICT');

    const after1 = await refundUntil(w, m, p, refund1, 'SUCCEEDED');
    assert.equal(after1.status, 'CONFIRMED', 'a refunded payment stays CONFIRMED');
    assert.equal(after1.amountRefunded, '2000');
    assert.equal(await debtOf(b.borrowerId), debt0 - 2000n);

    const rest = await signedRefund(w, m, p, '3000');
    const r2 = await refund(w, m, p, rest);
    assert.equal(r2.status, 202, JSON.stringify(r2.json));
    const after2 = await refundUntil(w, m, p, r2.json.refund.refundId, 'SUCCEEDED');
    assert.equal(after2.amountRefunded, '5000');
    assert.deepEqual((after2.refunds as { status: string; debtReduced: string }[]).map((r) => [r.status, r.debtReduced]), [['SUCCEEDED', '2000'], ['SUCCEEDED', '3000']]);
    assert.equal(await debtOf(b.borrowerId), debt0 - 5000n, 'debt fell by exactly the refunded sum');
    assert.equal(await balanceOf(m.payoutAddress), payout0 - 5000n, 'the merchant returned exactly the refunded sum');
    assert.equal((await findBorrower(w.store.c, b.borrowerId))!.debt, booked0 - 5000, 'booked debt follows the chain');

    const receipt = await w.publicClient.getTransactionReceipt({ hash: after2.refunds[1].transaction as Hex });
    const events = refundLogsIn(receipt.logs, w.settlement);
    assert.deepEqual(events.map((e) => [e.paymentId, e.amount]), [[p, 3000n]]);

    const third = await call(w, 'GET', `/facilitator/payments/${p}/refund-authorization?amount=1`, { token: m.apiKey });
    assert.equal(third.status, 409);
    assert.equal(third.json.error.code, 'REFUND_EXCEEDS_PAYMENT');
    assert.equal(third.json.error.refundable, '0');

    // payment.refunded, once per refund, with a stable id naming the refund.
    const delivery = await w.temporal.workflow.getHandle(`webhook-${hook.json.endpoint.id}-refund-${refund1}`).describe();
    assert.equal(delivery.type, 'webhookDeliveryWorkflow');
    const history = await w.temporal.workflow.getHandle(`webhook-${hook.json.endpoint.id}-refund-${refund1}`).fetchHistory();
    const data = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    const started = JSON.parse(Buffer.from(data ?? new Uint8Array()).toString('utf8')) as { events: { id: string; type: string; data: { refund: { refundId: string } } }[] };
    assert.deepEqual(
      started.events.map((e) => [e.type, e.id, e.data.refund.refundId]),
      [['payment.refunded', `evt_${p.replace(/-/g, '')}_refunded_${refund1.replace(/-/g, '')}`, refund1]],
    );
    assert.equal((await call(w, 'DELETE', `/facilitator/webhook-endpoints/${hook.json.endpoint.id}`, { token: m.apiKey })).status, 200);
  });

  it('refuses what would exceed the payment, even at the same instant, and what is not bound to it', async function () {
    const [p1, p2] = paid as [string, string];
    const a = await signedRefund(w, m, p2, '3000');
    const c = await signedRefund(w, m, p2, '3000');
    const [ra, rc] = await Promise.all([refund(w, m, p2, a), refund(w, m, p2, c)]);
    const statuses = [ra.status, rc.status].sort();
    assert.deepEqual(statuses, [202, 409], `${JSON.stringify(ra.json)} ${JSON.stringify(rc.json)}`);
    const refused = ra.status === 409 ? ra : rc;
    assert.equal(refused.json.error.code, 'REFUND_EXCEEDS_PAYMENT');
    assert.equal(refused.json.error.refundable, '2000');
    const admitted = ra.status === 202 ? ra : rc;

    // Redirected: an authorization signed for p1 cannot refund p2; one signed by another key is not the payout wallet's.
    const forP1 = await signedRefund(w, m, p1, '1').catch(() => null); // p1 is fully refunded: nothing to prepare
    assert.equal(forP1, null);
    const stolen = await signedRefund(w, m, p2, '500');
    const moved = { ...stolen, authorization: { ...stolen.authorization, nonce: `0x${p1.replace(/-/g, '')}${stolen.authorization.nonce.slice(34)}` } };
    const r = await refund(w, m, p2, moved);
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'REFUND_AUTHORIZATION_INVALID');
    assert.deepEqual((r.json.error.fields as { path: string }[]).map((f) => f.path).sort(), ['authorization.nonce', 'signature']);
    const forged = await signedRefund(w, m, p2, '500', generatePrivateKey());
    const f = await refund(w, m, p2, forged);
    assert.equal(f.json.error.code, 'REFUND_AUTHORIZATION_INVALID');
    assert.deepEqual((f.json.error.fields as { path: string }[]).map((x) => x.path), ['signature']);
    const unknown = await refund(w, m, randomUUID(), stolen);
    assert.equal(unknown.status, 404);

    await refundUntil(w, m, p2, admitted.json.refund.refundId, 'SUCCEEDED');
  });

  it('a refund recorded by an API process that died before starting its workflow is started by the next poll', async function () {
    const [, p2] = paid as [string, string];
    const body = await signedRefund(w, m, p2, '500');
    const refundId = randomUUID();
    const doc = (await w.store.c.refunds.findOne({ _id: p2 }))!;
    const createdAt = new Date(Date.now() - 120_000);
    const reserved = await reserveRefund(
      w.store.c,
      { _id: p2, merchantId: doc.merchantId, borrowerId: doc.borrowerId, amount: doc.amount, batchId: doc.batchId, transaction: doc.transaction },
      { refundId, amount: body.amount, status: 'PENDING', authorization: body.authorization, signature: body.signature, createdAt, updatedAt: createdAt },
    );
    assert.equal(reserved.kind, 'reserved');
    const done = await refundUntil(w, m, p2, refundId, 'SUCCEEDED');
    assert.equal(done.amountRefunded, '3500');
  });

  it('reconcile finds no difference between store and chain after the refunds; the export carries them', async function () {
    const out = await paymentsReconcile(w.cli, { merchant: m.merchantId, from: startedAt.toISOString() });
    assert.deepEqual(out.differences, []);
    assert.equal(out.storeConfirmed, 2);
    assert.equal(out.storeRefunds, 4);
    assert.equal(out.chainRefunds, 4);
    const exported = await paymentsExport(w.cli, { merchant: m.merchantId, from: startedAt.toISOString(), format: 'json', out: `/tmp/refund-export-${process.pid}.json` });
    assert.equal(exported.payments, 2);
    const rows = JSON.parse((await import('node:fs')).readFileSync(`/tmp/refund-export-${process.pid}.json`, 'utf8')) as { paymentId: string; amountRefunded: string }[];
    assert.deepEqual(Object.fromEntries(rows.map((r) => [r.paymentId, r.amountRefunded])), { [paid[0]!]: '5000', [paid[1]!]: '3500' });
  });
});
