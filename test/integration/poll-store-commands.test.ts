import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { minuteKey } from '../../src/domain/payment-ledger.js';
import { reserveRefund } from '../../src/store/refunds.js';
import { announceBatch, announceRefund, readSettlementBoard, sweepBoardMinutes, type AnnouncedBoards } from '../../src/store/settlement/board.js';
import { metricSum, scrapeApiMetrics } from '../helpers/metrics.js';
import { refund, signedRefund } from '../helpers/refunds.js';
import { recordStoreCommands } from '../helpers/store-commands.js';
import { anvilControl } from '../support/anvil-control.js';
import { call, capture, newBorrower, newMerchant, newVoucher, UNTHROTTLED, type TestBorrower, type TestMerchant, type World, world } from '../helpers/world.js';

/** The board's read interval in the API (BOARD_TTL_MS in src/payments/status-cache.ts), plus slack for the poll itself. */
const BOARD_TTL_MS = 250;

const storeCommands = async (w: World, command: string, collection: string) =>
  metricSum(await scrapeApiMetrics(w), 'x402_store_commands_total', `command="${command}",collection="${collection}"`);

/** The API's store commands so far, by `command collection`. */
async function commandsByCollection(w: World): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await scrapeApiMetrics(w)).split('\n')) {
    const hit = /^x402_store_commands_total\{command="([^"]+)",collection="([^"]+)"[^}]*\} (\S+)$/.exec(line);
    if (hit) out.set(`${hit[1]} ${hit[2]}`, Number(hit[3]));
  }
  return out;
}

function growth(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]).filter(([, d]) => (d as number) > 0));
}

describe('merchant: what status polls cost the store', function () {
  this.timeout(180_000);
  let w: World;
  let m: TestMerchant;
  let b: TestBorrower;

  before(async function () {
    w = await world();
    [m, b] = await Promise.all([newMerchant(w, 'Poll cost merchant', { rateLimits: UNTHROTTLED }), newBorrower(w)]);
  });

  const poll = (paymentId: string) => call(w, 'GET', `/facilitator/payments/${paymentId}`, { token: m.apiKey });

  async function capturedPayment(): Promise<string> {
    const v = await newVoucher(w, m, b, '1000');
    const res = await capture(w, m, v.captureBody, v.idempotencyKey);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.receipt.paymentId as string;
  }

  /** Polls once a second from capture to CONFIRMED; returns the payment_refunds reads of every poll and the last answer. */
  async function pollToConfirmed(paymentId: string) {
    const refundReads: number[] = [];
    const perPoll: Record<string, number>[] = [];
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const before = await commandsByCollection(w);
      const res = await poll(paymentId);
      const grew = growth(before, await commandsByCollection(w));
      perPoll.push(grew);
      refundReads.push(grew['find payment_refunds'] ?? 0);
      // The board (batches, voids, refunds, backlog) is one command whenever a poll reads it.
      assert.ok((grew['find settlement_shards'] ?? 0) <= 1, JSON.stringify(grew));
      assert.equal(res.status, 200, JSON.stringify(res.json));
      if (res.json.status === 'CONFIRMED') {
        console.log(`      store commands per poll, capture to CONFIRMED: ${JSON.stringify(perPoll)}`);
        return { refundReads, last: res.json };
      }
      assert.notEqual(res.json.status, 'FAILED', JSON.stringify(res.json));
      await new Promise((r) => setTimeout(r, 1000));
    }
    throw new Error(`payment ${paymentId} did not reach CONFIRMED`);
  }

  it("an unfinished batch's record is read a few times per batch however long its payments are polled, not every 250 ms", async function () {
    const chain = anvilControl(w.env.RPC_URL as string);
    const before = await storeCommands(w, 'find', 'settlement_batches');
    await chain.automine(false); // the batches stay SUBMITTED until the test mines
    const batches = new Set<string>();
    let polls = 0;
    try {
      const payments = await Promise.all(Array.from({ length: 6 }, () => capturedPayment()));
      const submittedAt = new Map<string, number>();
      const deadline = Date.now() + 60_000;
      // Every payment polled ten times a second until each has been SUBMITTED for three seconds.
      while (submittedAt.size < payments.length || Date.now() - Math.max(...submittedAt.values()) < 3_000) {
        assert.ok(Date.now() < deadline, `not all submitted: ${submittedAt.size} of ${payments.length}`);
        const answers = await Promise.all(payments.map((p) => poll(p)));
        polls += answers.length;
        answers.forEach((res, i) => {
          assert.equal(res.status, 200, JSON.stringify(res.json));
          assert.ok(['QUEUED', 'SUBMITTED'].includes(res.json.status as string), JSON.stringify(res.json));
          if (res.json.status === 'SUBMITTED') {
            batches.add(res.json.batchId as string);
            if (!submittedAt.has(payments[i]!)) submittedAt.set(payments[i]!, Date.now());
          }
        });
        await new Promise((r) => setTimeout(r, 100));
      }
      await chain.mine(1);
      await chain.automine(true);
      for (const p of payments) {
        const { last } = await pollToConfirmed(p);
        assert.ok(batches.has(last.batchId as string), JSON.stringify(last));
      }
    } finally {
      await chain.automine(true);
    }
    const reads = (await storeCommands(w, 'find', 'settlement_batches')) - before;
    const board = await readSettlementBoard(w.store.c, w.cli.env.SETTLEMENT_SHARDS, new Date());
    for (const id of batches) assert.ok(board.batchVersions.has(id), `batch ${id} is versioned on the board`);
    console.log(`      settlement_batches reads: ${reads} for ${batches.size} batch(es) over ${polls} polls`);
    // First seen (SUBMITTED) and confirmed: two reads a batch (shared by batches that move together), one
    // spare; plus one for the batches of earlier tests the first board this process takes in may list.
    assert.ok(reads <= 3 * batches.size + 1, `${reads} reads of ${batches.size} batch(es)`);
  });

  it("a shard's board versions each record write; versions an older worker left behind count for nothing", async function () {
    const c = w.store.c;
    const shard = 1000 + Math.floor(Math.random() * 1e6);
    const _id = `batches-${shard}`;
    const boards: AnnouncedBoards = new Map();
    await announceBatch(c, shard, 'a', boards);
    await announceBatch(c, shard, 'b', boards);
    const first = (await c.shardStatus.findOne({ _id }))!;
    await announceBatch(c, shard, 'a', boards); // a's record written again
    const second = (await c.shardStatus.findOne({ _id }))!;
    assert.deepEqual(second.batchIds, ['b', 'a']);
    assert.equal(second.versions?.b, first.versions?.b);
    assert.notEqual(second.versions?.a, first.versions?.a);
    assert.equal(second.versionsRev, second.rev);

    // A worker older than versions lists batch c (and may record a's state) without touching them.
    await c.shardStatus.updateOne({ _id }, { $set: { rev: randomUUID(), batchIds: ['b', 'a', 'c'], at: new Date() } });
    // This process's next announce finds another revision, reads the board, and keeps no version it cannot vouch for.
    await announceBatch(c, shard, 'd', boards);
    const third = (await c.shardStatus.findOne({ _id }))!;
    assert.deepEqual(third.batchIds, ['b', 'a', 'c', 'd']);
    assert.deepEqual(Object.keys(third.versions ?? {}), ['d']);
    assert.equal(third.versionsRev, third.rev);
  });

  it('the shards board is read in one command', async function () {
    const seen = await recordStoreCommands(w, (c) => readSettlementBoard(c, 4, new Date()));
    assert.deepEqual(seen.map((s) => [s.name, s.collection]), [['find', 'settlement_shards']]);
  });

  it('the sweep announcements run (at most every few minutes per process) drops minute entries the board no longer reads', async function () {
    const old = new Date(Date.now() - 10 * 60_000);
    const stale = `refunds-${minuteKey(old)}`;
    await w.store.c.shardStatus.updateOne({ _id: stale }, { $set: { paymentIds: [randomUUID()], at: old } }, { upsert: true });
    await announceRefund(w.store.c, randomUUID(), new Date());
    // Whether this announcement swept depends on the process's earlier ones (other test files announce too): sweep now.
    await sweepBoardMinutes(w.store.c, new Date());
    assert.equal(await w.store.c.shardStatus.findOne({ _id: stale }), null);
    assert.ok(await w.store.c.shardStatus.findOne({ _id: `refunds-${minuteKey(new Date())}` }), 'the current minute stays');
  });

  it('no poll from capture to CONFIRMED reads payment_refunds; a refund recorded afterwards shows within the board interval', async function () {
    const p = await capturedPayment();
    const { refundReads, last } = await pollToConfirmed(p);
    assert.deepEqual(refundReads, refundReads.map(() => 0), `payment_refunds reads per poll: ${refundReads.join(',')}`);
    assert.equal(last.refunds, undefined);

    // Another API process records a refund (the store writer announces it on the board first).
    const body = await signedRefund(w, m, p, '400');
    const doc = (await w.store.c.payments.findOne({ _id: p }))!;
    const now = new Date();
    const refundId = randomUUID();
    const reserved = await reserveRefund(
      w.store.c,
      { _id: p, merchantId: doc.merchantId, borrowerId: doc.borrowerId, amount: doc.amount, batchId: last.batchId as string, transaction: last.transaction as string },
      { refundId, amount: body.amount, status: 'PENDING', authorization: body.authorization, signature: body.signature, createdAt: now, updatedAt: now },
    );
    assert.equal(reserved.kind, 'reserved');
    await new Promise((r) => setTimeout(r, BOARD_TTL_MS + 50));
    const after = await poll(p);
    assert.deepEqual((after.json.refunds as { refundId: string }[] | undefined)?.map((r) => r.refundId), [refundId], JSON.stringify(after.json));
  });

  it("a refund asked for through this API shows in the next poll; a board entry without a refund shows none", async function () {
    const p = await capturedPayment();
    const { last } = await pollToConfirmed(p);
    assert.equal(last.refunds, undefined);

    const r = await refund(w, m, p, await signedRefund(w, m, p, '300'));
    assert.equal(r.status, 202, JSON.stringify(r.json));
    const next = await poll(p);
    assert.deepEqual((next.json.refunds as { refundId: string }[]).map((x) => x.refundId), [r.json.refund.refundId]);

    // An announcement whose refund was then refused (or never written) reports nothing.
    const q = await capturedPayment();
    await pollToConfirmed(q);
    await announceRefund(w.store.c, q, new Date());
    await new Promise((res) => setTimeout(res, BOARD_TTL_MS + 50));
    const before = await storeCommands(w, 'find', 'payment_refunds');
    const none = await poll(q);
    assert.equal(none.json.status, 'CONFIRMED');
    assert.equal(none.json.refunds, undefined);
    assert.equal((await storeCommands(w, 'find', 'payment_refunds')) - before, 1, 'a payment named on the board is read');
  });
});
