import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { settledEventsFor } from '../helpers/ledger.js';
import { call, capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { startExtraApi, type ExtraApi } from '../helpers/extra-api.js';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { paymentsExport, paymentsReconcile } from '../../tools/cli/payment-commands.js';
import { findBorrower } from '../../src/store/borrowers.js';
import { withBatchOutcomes } from '../../src/store/payment-outcomes.js';

// One shard whose batches close only when full (4 payments): a payment captured alone stays
// unclaimed for as long as the test needs, so a void before the batch is not a matter of timing.
const BATCH = 4;

async function captureOne(w: World, m: TestMerchant, b: TestBorrower, amount: string, orderRef: string) {
  const v = await newVoucher(w, m, b, amount, { orderRef });
  const res = await capture(w, m, v.captureBody, v.idempotencyKey);
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return { paymentId: res.json.receipt.paymentId as string, body: v.captureBody, key: v.idempotencyKey, spendIntentId: v.prepared.voucher.spendIntentId };
}

const ADMIN_CLI = fileURLToPath(new URL('../../tools/cli/admin.js', import.meta.url));

const voidIt = (w: World, m: TestMerchant, paymentId: string, key = randomUUID()) =>
  call(w, 'POST', `/facilitator/payments/${paymentId}/void`, { token: m.apiKey, idempotencyKey: key });

describe('merchant: void before settlement, list and batch views', function () {
  this.timeout(300_000);
  const env = useIsolatedStack({ env: { BATCH_MAX_WAIT_MS: '600000', BATCH_MAX_PAYMENTS: String(BATCH), SETTLEMENT_SHARDS: '1' } });
  let w: World;
  let m: TestMerchant;
  let b: TestBorrower;

  let api2: ExtraApi;

  before(async function () {
    w = env().world;
    [m, b] = await Promise.all([newMerchant(w, 'Void merchant', { rateLimits: UNTHROTTLED }), newBorrower(w)]);
    api2 = await startExtraApi('api-2', {}, { stack: env().stack });
  });

  after(async function () {
    await api2?.stop();
  });

  it('voids an unclaimed payment: VOIDED, the hold released, its workflow ended, nothing settled; replays agree', async function () {
    const cached = await captureOne(w, m, b, '300', 'cancelled-elsewhere');
    const before = await findBorrower(w.store.c, b.borrowerId);
    const p = await captureOne(w, m, b, '7000', 'cancelled-1');
    const otherApiPoll = async (id: string) => {
      const res = await fetch(`${api2.baseUrl}/facilitator/payments/${id}`, { headers: { authorization: `Bearer ${m.apiKey}` } });
      return (await res.json()) as { status: string };
    };
    assert.equal((await otherApiPoll(cached.paymentId)).status, 'QUEUED');
    const held = await findBorrower(w.store.c, b.borrowerId);
    assert.equal(held?.holds[p.spendIntentId], 7000);

    const key = randomUUID();
    const res = await voidIt(w, m, p.paymentId, key);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.receipt.status, 'VOIDED');
    assert.equal(res.json.replayed, false);
    assert.ok(res.json.receipt.voidedAt);

    const after = await findBorrower(w.store.c, b.borrowerId);
    assert.equal(after?.holds[p.spendIntentId], undefined, 'the hold is released at once');
    assert.equal(after?.available, before?.available, 'the credit is available again');

    const polled = await call(w, 'GET', `/facilitator/payments/${p.paymentId}`, { token: m.apiKey });
    assert.equal(polled.json.status, 'VOIDED');
    assert.equal(polled.json.voidedAt, res.json.receipt.voidedAt);
    // Another API process that polled the payment before the void learns of it from the void board.
    assert.equal((await otherApiPoll(cached.paymentId)).status, 'QUEUED');
    assert.equal((await voidIt(w, m, cached.paymentId)).status, 200);
    let seen = '';
    for (const deadline = Date.now() + 3_000; Date.now() < deadline && seen !== 'VOIDED'; await new Promise((r) => setTimeout(r, 100))) {
      seen = (await otherApiPoll(cached.paymentId)).status;
    }
    assert.equal(seen, 'VOIDED', 'within a board refresh (250 ms), not after the 30 s claim lookup');
    const again = await voidIt(w, m, p.paymentId, key);
    assert.equal(again.status, 200);
    assert.equal(again.json.replayed, true);
    assert.equal(again.json.receipt.voidedAt, res.json.receipt.voidedAt);
    const recaptured = await capture(w, m, p.body, p.key);
    assert.equal(recaptured.status, 200, JSON.stringify(recaptured.json));
    assert.equal(recaptured.json.receipt.status, 'VOIDED', 'a capture replay answers what a poll does');

    const wf = await w.temporal.workflow.getHandle(p.paymentId).result();
    assert.equal((wf as { status: string }).status, 'VOIDED');

    // The shard keeps settling other payments; the voided one never reaches the chain.
    const others = [];
    for (let i = 0; i < BATCH; i++) others.push(await captureOne(w, m, b, '1000', `kept-${i}`));
    for (const o of others) await pollUntil(w, m, o.paymentId, 'CONFIRMED');
    assert.equal((await settledEventsFor(w, [p.paymentId])).length, 0);
    const events = await settledEventsFor(w, others.map((o) => o.paymentId));
    assert.deepEqual(new Set(events.map((e) => String(e.args.paymentId).toLowerCase())), new Set(others.map((o) => uuidToBytes32(o.paymentId).toLowerCase())));
  });

  it('answers 409 PAYMENT_ALREADY_CLAIMED once a batch holds the payment, and the payment still settles', async function () {
    const batch = [];
    for (let i = 0; i < BATCH; i++) batch.push(await captureOne(w, m, b, '1500', `claimed-${i}`));
    const done = await pollUntil(w, m, batch[0]!.paymentId, 'CONFIRMED');
    const res = await voidIt(w, m, batch[0]!.paymentId);
    assert.equal(res.status, 409, JSON.stringify(res.json));
    assert.equal(res.json.error.code, 'PAYMENT_ALREADY_CLAIMED');
    assert.equal(res.json.error.batchId, done.batchId);
    assert.equal((await settledEventsFor(w, [batch[0]!.paymentId])).length, 1);
  });

  it('refuses what is not the merchant\'s, a reused key, and a request without a key', async function () {
    const p = await captureOne(w, m, b, '1100', 'other-checks');
    const stranger = await newMerchant(w, 'Stranger');
    assert.equal((await voidIt(w, stranger, p.paymentId)).status, 404);
    assert.equal((await voidIt(w, m, randomUUID())).status, 404);
    assert.equal((await voidIt(w, m, 'not-an-id')).status, 404);
    const noKey = await call(w, 'POST', `/facilitator/payments/${p.paymentId}/void`, { token: m.apiKey });
    assert.equal(noKey.json.error.code, 'IDEMPOTENCY_KEY_REQUIRED');
    const key = randomUUID();
    assert.equal((await voidIt(w, m, p.paymentId, key)).status, 200);
    const q = await captureOne(w, m, b, '1200', 'other-checks-2');
    const reused = await voidIt(w, m, q.paymentId, key);
    assert.equal(reused.status, 409);
    assert.equal(reused.json.error.code, 'IDEMPOTENCY_KEY_CONFLICT');
    assert.equal((await voidIt(w, m, q.paymentId)).status, 200, 'the conflict left the payment voidable');
  });

  it('answers the refund authorization of a payment that is not CONFIRMED with 409 PAYMENT_NOT_CONFIRMED, as the refund does', async function () {
    const queued = await captureOne(w, m, b, '1300', 'not-yet-refundable');
    const voided = (await call(w, 'GET', '/facilitator/payments?status=VOIDED&limit=1', { token: m.apiKey })).json.data[0].paymentId as string;
    const confirmed = (await call(w, 'GET', '/facilitator/payments?status=CONFIRMED&limit=1', { token: m.apiKey })).json.data[0].paymentId as string;
    const wellFormedRefund = {
      amount: '100',
      authorization: { from: m.payoutAddress, to: w.settlement, value: '100', validAfter: '0', validBefore: String(Math.floor(Date.now() / 1000) + 3600), nonce: `0x${'11'.repeat(32)}` },
      signature: `0x${'22'.repeat(65)}`,
    };
    for (const [paymentId, status] of [[queued.paymentId, 'QUEUED'], [voided, 'VOIDED']] as const) {
      const prepared = await call(w, 'GET', `/facilitator/payments/${paymentId}/refund-authorization?amount=100`, { token: m.apiKey });
      assert.equal(prepared.status, 409, `${status}: ${JSON.stringify(prepared.json)}`);
      assert.equal(prepared.json.error.code, 'PAYMENT_NOT_CONFIRMED');
      assert.equal(prepared.json.error.paymentStatus, status);
      assert.equal(prepared.json.refundable, undefined);
      const refunded = await call(w, 'POST', `/facilitator/payments/${paymentId}/refunds`, { token: m.apiKey, body: wellFormedRefund, idempotencyKey: randomUUID() });
      assert.equal(refunded.status, 409, JSON.stringify(refunded.json));
      const { requestId: a, ...preparedError } = prepared.json.error;
      const { requestId: b2, ...refundError } = refunded.json.error;
      assert.ok(a && b2);
      assert.deepEqual(preparedError, refundError, 'the same error body as the refund route');
    }
    const ok = await call(w, 'GET', `/facilitator/payments/${confirmed}/refund-authorization?amount=100`, { token: m.apiKey });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal(ok.json.typedData.message.value, '100');
  });

  it('lists every payment newest first across pages, with status, orderRef, batch and time filters', async function () {
    const all: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const res = await call(w, 'GET', `/facilitator/payments?limit=3${after ? `&starting_after=${after}` : ''}`, { token: m.apiKey });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.equal(res.json.object, 'list');
      all.push(...res.json.data.map((r: { paymentId: string }) => r.paymentId));
      if (!res.json.has_more) break;
      after = res.json.data.at(-1).paymentId;
    }
    const mine = await w.store.c.payments.find({ merchantId: m.merchantId }).toArray();
    const expected = mine.sort((x, y) => y.capturedAt.getTime() - x.capturedAt.getTime() || (y._id < x._id ? -1 : 1)).map((d) => d._id);
    assert.deepEqual(all, expected, 'every payment once, newest first');

    const voided = await call(w, 'GET', '/facilitator/payments?status=VOIDED&limit=100', { token: m.apiKey });
    assert.equal(voided.json.data.length, 4);
    assert.ok(voided.json.data.every((r: { status: string; voidedAt?: string }) => r.status === 'VOIDED' && r.voidedAt));
    const byOrder = await call(w, 'GET', '/facilitator/payments?orderRef=cancelled-1', { token: m.apiKey });
    assert.deepEqual(byOrder.json.data.map((r: { orderRef: string; status: string }) => [r.orderRef, r.status]), [['cancelled-1', 'VOIDED']]);

    const confirmed = (await call(w, 'GET', '/facilitator/payments?status=CONFIRMED&limit=1', { token: m.apiKey })).json.data[0];
    const inBatch = await call(w, 'GET', `/facilitator/payments?batchId=${confirmed.batchId}&limit=100`, { token: m.apiKey });
    assert.equal(inBatch.json.data.length, BATCH);
    assert.ok(inBatch.json.data.every((r: { batchId: string; transaction: string }) => r.batchId === confirmed.batchId && r.transaction === confirmed.transaction));
    const view = await call(w, 'GET', `/facilitator/batches/${confirmed.batchId}`, { token: m.apiKey });
    assert.equal(view.status, 200, JSON.stringify(view.json));
    assert.equal(view.json.status, 'CONFIRMED');
    assert.equal(view.json.transaction, confirmed.transaction);
    assert.equal(view.json.count, BATCH);
    assert.equal(view.json.amount, view.json.payments.reduce((s: bigint, r: { amount: string }) => s + BigInt(r.amount), 0n).toString());

    const newest = new Date(mine[0]!.capturedAt);
    const since = await call(w, 'GET', `/facilitator/payments?created[gte]=${newest.toISOString()}`, { token: m.apiKey });
    assert.deepEqual(since.json.data.map((r: { paymentId: string }) => r.paymentId), [expected[0]]);
    const until = await call(w, 'GET', `/facilitator/payments?created[lt]=${newest.toISOString()}&limit=100`, { token: m.apiKey });
    assert.deepEqual(until.json.data.map((r: { paymentId: string }) => r.paymentId), expected.slice(1));
  });

  it('exports the settled payments as the chain paid them; reconcile finds no difference, and finds a tampered store', async function () {
    const from = new Date(Date.now() - 3600_000).toISOString();
    const out = join(tmpdir(), `settled-${randomUUID()}.csv`);
    try {
      const summary = await paymentsExport(w.cli, { merchant: m.merchantId, from, format: 'csv', out });
      const [header, ...lines] = readFileSync(out, 'utf8').trim().split('\r\n');
      const columns = header!.slice(1, -1).split('","');
      const rows = lines.map((l) => Object.fromEntries(l.slice(1, -1).split('","').map((v, i) => [columns[i], v])));
      assert.equal(rows.length, summary.payments);
      const confirmed = (await withBatchOutcomes(w.store.c, await w.store.c.payments.find({ merchantId: m.merchantId }).toArray())).filter((d) => d.status === 'CONFIRMED');
      const events = await settledEventsFor(w, confirmed.map((d) => d._id));
      assert.equal(rows.length, events.length, 'one row per PaymentSettled event of the merchant');
      for (const e of events) {
        const row = rows.find((r) => uuidToBytes32(r.paymentId!).toLowerCase() === String(e.args.paymentId).toLowerCase());
        assert.ok(row, `a row for ${e.args.paymentId}`);
        assert.equal(BigInt(row.amount!), e.args.amount);
        assert.equal(row.transaction!.toLowerCase(), e.transactionHash.toLowerCase());
        assert.equal(BigInt(row.blockNumber!), e.blockNumber);
      }

      const clean = await paymentsReconcile(w.cli, { merchant: m.merchantId, from });
      assert.deepEqual(clean.differences, []);
      assert.equal(clean.storeConfirmed, events.length);
      assert.equal(clean.chainSettled, events.length);

      const batchId = rows[0]!.batchId!;
      const batch = await w.store.c.batches.findOne({ _id: batchId });
      await w.store.c.batches.updateOne({ _id: batchId }, { $set: { transaction: `0x${'de'.repeat(32)}` } });
      try {
        const tampered = await paymentsReconcile(w.cli, { merchant: m.merchantId, from });
        const inBatch = rows.filter((r) => r.batchId === batchId).map((r) => r.paymentId).sort();
        assert.deepEqual(tampered.differences.map((d) => `${d.kind}:${d.paymentId}`).sort(), inBatch.map((id) => `transaction_differs:${id}`));
      } finally {
        await w.store.c.batches.updateOne({ _id: batchId }, { $set: { transaction: batch!.transaction! } });
      }
    } finally {
      rmSync(out, { force: true });
    }
  });

  it('exports to stdout as nothing but the data: the summary goes to stderr', async function () {
    const from = new Date(Date.now() - 3600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const out = join(tmpdir(), `settled-${randomUUID()}.csv`);
    const run = (args: string[]) => promisify(execFile)(process.execPath, [ADMIN_CLI, 'payments', 'export', '--merchant', m.merchantId, '--from', from, '--to', to, ...args], { env: { ...process.env, ...w.env } });
    try {
      const summary = await paymentsExport(w.cli, { merchant: m.merchantId, from, to, format: 'csv', out });
      assert.ok(summary.payments > 0);
      const csv = await run([]);
      assert.equal(csv.stdout, readFileSync(out, 'utf8'), 'stdout is exactly the CSV --out would hold');
      assert.match(csv.stderr, new RegExp(`payments +${summary.payments}\n`));
      const json = await run(['--format', 'json', '--json']);
      assert.equal(JSON.parse(json.stdout).length, summary.payments, 'stdout is exactly the JSON rows');
      assert.equal(JSON.parse(json.stderr).payments, summary.payments);
      const toFile = await run(['--out', out]);
      assert.match(toFile.stdout, /file +\S+settled-/, 'with --out the summary stays on stdout');
    } finally {
      rmSync(out, { force: true });
    }
  });

  it('keeps other merchants\' payments and batches out, and refuses a bad query with the one error shape', async function () {
    const stranger = await newMerchant(w, 'Stranger 2');
    const list = await call(w, 'GET', '/facilitator/payments', { token: stranger.apiKey });
    assert.deepEqual(list.json.data, []);
    const anyBatch = (await call(w, 'GET', '/facilitator/payments?status=CONFIRMED&limit=1', { token: m.apiKey })).json.data[0].batchId;
    assert.equal((await call(w, 'GET', `/facilitator/batches/${anyBatch}`, { token: stranger.apiKey })).status, 404);
    for (const q of ['limit=0', 'limit=101', 'status=DONE', 'created[gte]=yesterday', 'colour=red', `starting_after=${randomUUID()}`, 'orderRef=a&batchId=b']) {
      const res = await call(w, 'GET', `/facilitator/payments?${q}`, { token: m.apiKey });
      assert.equal(res.status, 400, `${q}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.code, 'INVALID_REQUEST');
      assert.ok(res.json.error.fields?.length);
    }
  });
});
