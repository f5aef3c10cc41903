import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { chargeDailySpend, refundDailySpend } from '../../src/store/agent-spend.js';
import { closeHoldsOfBorrowers, convertHoldToDebt, findBorrower, holdCredit, releaseHold } from '../../src/store/borrowers.js';
import { announceBatch, type AnnouncedBoards } from '../../src/store/settlement/board.js';
import { findSpendIntentFates } from '../../src/store/spend-intents.js';
import type { Collections } from '../../src/store/collections.js';
import { claimInsertFirst, type HeldVerdict } from '../../src/store/claim.js';
import { LeaseBusy, withLease } from '../../src/store/lease-lock.js';
import { consumeRate, slotId } from '../../src/store/rate-limits.js';
import { bookRepayment } from '../../src/store/repayments.js';
import type { PaymentDoc } from '../../src/store/documents.js';
import { closeSigningRequest, ensureSigningRequest, markSigned } from '../../src/store/signing-requests.js';
import { leaseIncrements } from '../helpers/lease-increments.js';
import { readJsonResponse } from '../support/http.js';
import { isByIdOnly, isCompareAndSetById, isFindByIds, recordStoreCommands, type StoreCommand } from '../helpers/store-commands.js';
import { preparePayment, type PreparedPayment } from '../../src/agents/prepare-payment.js';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { spendDayId, utcDay } from '../../src/domain/agent-policy.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { agentDeps, paymentRequiredHeader } from '../helpers/onboarding.js';
import { prepareOverMcp } from '../helpers/prepare-outcome.js';
import { pendingSigningRequest } from '../helpers/signing-request-doc.js';
import { newBorrower, newMerchant, world, type World } from '../helpers/world.js';

/** Commands that would make FerretDB v1 scan a collection (our launcher answers a compare-and-set by _id without one). */
function scans(commands: StoreCommand[]): StoreCommand[] {
  return commands.filter((cmd) => !cmd.filters.every((f) => isByIdOnly(f) || isCompareAndSetById(cmd, f) || isFindByIds(cmd, f)));
}

describe('store access on the real store: lease locks and _id-only hot paths', function () {
  let w: World;
  let c: Collections;

  before(async function () {
    w = await world();
    c = w.store.c;
  });

  describe('lease lock', function () {
    it('read-modify-writes of one document from three processes at once lose nothing', async function () {
      const key = `test:${randomUUID()}`;
      const counters = w.store.db.collection<{ _id: string; n: number }>('lease_test_counters');
      await counters.insertOne({ _id: key, n: 0 });
      const script = fileURLToPath(new URL('../helpers/lease-increments.js', import.meta.url));
      const child = () =>
        new Promise<void>((resolve, reject) => {
          execFile(process.execPath, [script, w.env.MONGODB_URI as string, w.store.db.databaseName, key, '10'], (err, _out, stderr) =>
            err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(),
          );
        });
      await Promise.all([child(), child(), leaseIncrements(w.env.MONGODB_URI as string, w.store.db.databaseName, key, 10)]);
      assert.equal((await counters.findOne({ _id: key }))?.n, 30);
      assert.equal(await c.locks.findOne({ _id: key }), null, 'the lease is released');
    });

    it("takes over a dead holder's expired lease, and releases the lease when the work throws", async function () {
      const key = `test:${randomUUID()}`;
      await c.locks.insertOne({ _id: key, owner: 'crashed', expiresAt: new Date(Date.now() - 1000) });
      const started = Date.now();
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => withLease(c, key, async () => i)));
      assert.deepEqual(results, [0, 1, 2, 3, 4]);
      assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
      await assert.rejects(
        withLease(c, key, async () => {
          throw new Error('boom');
        }),
        /boom/,
      );
      const left = await c.locks.find({ _id: { $regex: `^${key}` } }).toArray();
      assert.deepEqual(left, [], 'no lease and no takeover marker left behind');
    });

    it('gives up on a live lease after the bounded wait with a retryable LeaseBusy, leaving it alone', async function () {
      const key = `test:${randomUUID()}`;
      await c.locks.insertOne({ _id: key, owner: 'alive', expiresAt: new Date(Date.now() + 60_000) });
      const started = Date.now();
      let ran = false;
      await assert.rejects(
        withLease(
          c,
          key,
          async () => {
            ran = true;
          },
          { waitMs: 300 },
        ),
        (err: unknown) => err instanceof LeaseBusy && err.key === key,
      );
      const waited = Date.now() - started;
      assert.ok(waited >= 300 && waited < 3_000, `waited ${waited} ms`);
      assert.equal(ran, false);
      assert.equal((await c.locks.findOne({ _id: key }))?.owner, 'alive');
      await c.locks.deleteOne({ _id: key });
    });
    it('a borrower change computed from a read another writer overtook is decided again, so neither change is lost', async function () {
      const b = await newBorrower(w);
      const before = await findBorrower(c, b.borrowerId);
      assert.ok(before);
      const script = fileURLToPath(new URL('../helpers/stalled-borrower-change.js', import.meta.url));
      // The stalled writer reads, then freezes 2.5 s before writing from what it read.
      const child = spawn(process.execPath, [script, w.env.MONGODB_URI as string, w.store.db.databaseName, b.borrowerId, '2500'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      const deadline = Date.now() + 15_000;
      while (!out.includes('read')) {
        assert.ok(Date.now() < deadline, `the stalled writer never read the borrower: ${err}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(await holdCredit(c, b.borrowerId, 'next-holder', 10), 'held', 'the other writer is not blocked by the stalled one');
      assert.equal(await exited, 0, err);
      assert.match(out, /wrote:2\b/, 'the stalled write was refused once and decided again from the new state');
      const after = await findBorrower(c, b.borrowerId);
      assert.equal(after?.available, before.available - 11, 'both changes are kept');
      assert.deepEqual(after?.holds, { ...before.holds, 'next-holder': 10, 'stale-holder': 1 });
      assert.equal(await c.locks.findOne({ _id: `borrower:${b.borrowerId}` }), null, 'no lease is taken');
    });

    it('a record locked past the wait answers REST 503 with Retry-After and MCP UNAVAILABLE, changing nothing', async function () {
      const deps = await agentDeps(w);
      const m = await newMerchant(w, 'Busy borrower');
      const b = await newBorrower(w);
      const signing = await ensureSigningRequest(c, pendingSigningRequest({ borrowerId: b.borrowerId, expiresInMs: -1_000 }));
      const stuck = { owner: 'stuck', expiresAt: new Date(Date.now() + 60_000) };
      // Prepare charges the agent key's day under that day's lease before it holds credit.
      await c.locks.insertMany([
        { _id: `spend-day:${spendDayId(b.agentKeyId, utcDay(Date.now()))}`, ...stuck },
        { _id: `signing-request:${signing._id}`, ...stuck },
      ]);
      try {
        const token = await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES });
        // The request has expired, so any well-formed signature goes straight to markExpired, under the lock.
        const signatureUrl = `${new URL(w.baseUrl).origin}/borrower/api/signing-requests/${signing._id}/signature`;
        const [prepared, posted] = await Promise.all([
          prepareOverMcp(w, token, paymentRequiredHeader(deps, m, '1000'), 'busy-1'),
          fetch(signatureUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signature: `0x${'11'.repeat(65)}` }) }).then(readJsonResponse),
        ]);
        assert.equal(prepared.error?.code, 'UNAVAILABLE', JSON.stringify(prepared));
        assert.equal(posted.status, 503, JSON.stringify(posted.json));
        assert.equal(posted.json.error.code, 'UNAVAILABLE');
        assert.match(posted.json.error.requestId, /^req_/);
        assert.match(posted.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      } finally {
        await c.locks.deleteMany({ owner: 'stuck' });
      }
      assert.deepEqual((await findBorrower(c, b.borrowerId))?.holds, {});
      assert.equal((await c.signingRequests.findOne({ _id: signing._id }))?.status, 'PENDING');
    });
  });

  describe('insert-first claims (store/claim.ts)', function () {
    type ClaimDoc = { _id: string; by: number };

    it('of concurrent claimers exactly one wins; every other reads its claim and decides on it', async function () {
      const col = w.store.db.collection<ClaimDoc>('claim_test');
      const id = `claim:${randomUUID()}`;
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, (_, by) =>
          claimInsertFirst<ClaimDoc, string>(col, {
            attempts: 3,
            doc: () => ({ _id: id, by }),
            won: (doc) => `won:${doc.by}`,
            held: (held, mine) => ({ answer: `saw:${held.by}:as:${mine.by}` }),
            unsettled: () => new Error('unsettled'),
          }),
        ),
      );
      const winners = outcomes.filter((o) => o.startsWith('won:'));
      assert.equal(winners.length, 1, outcomes.join(' '));
      const winner = Number(winners[0]!.slice('won:'.length));
      assert.equal((await col.findOne({ _id: id }))?.by, winner);
      for (const o of outcomes.filter((x) => !x.startsWith('won:'))) assert.match(o, new RegExp(`^saw:${winner}:as:\\d$`));
    });

    it('retries after the caller clears a held claim, and gives up with the caller\'s error once the attempts are spent', async function () {
      const col = w.store.db.collection<ClaimDoc>('claim_test');
      const id = `claim:${randomUUID()}`;
      await col.insertOne({ _id: id, by: -1 });
      const cleared = await claimInsertFirst<ClaimDoc, string>(col, {
        attempts: 2,
        doc: () => ({ _id: id, by: 7 }),
        won: (doc) => `won:${doc.by}`,
        held: async (held): Promise<HeldVerdict<string>> => {
          await col.deleteOne({ _id: held._id, by: held.by });
          return 'retry';
        },
        unsettled: () => new Error('unsettled'),
      });
      assert.equal(cleared, 'won:7');
      let judged = 0;
      await assert.rejects(
        claimInsertFirst<ClaimDoc, string>(col, {
          attempts: 3,
          doc: () => ({ _id: id, by: 8 }),
          won: () => 'won',
          held: () => {
            judged++;
            return 'retry';
          },
          unsettled: () => new Error('claim did not settle'),
        }),
        /claim did not settle/,
      );
      assert.equal(judged, 3);
      assert.equal((await col.findOne({ _id: id }))?.by, 7, 'the held claim is left alone');
    });
  });

  describe('the launcher looks documents up by _id (tools/ferretdb)', function () {
    it('answers a find by a list of ids without reading the collection (FerretDB v1 read all of it: over a second at 30k documents)', async function () {
      const col = w.store.db.collection<{ _id: string; n: number }>(`ids_find_${randomUUID().slice(0, 8)}`);
      try {
        for (let i = 0; i < 20_000; i += 2000) await col.insertMany(Array.from({ length: 2000 }, (_, j) => ({ _id: `d-${i + j}`, n: i + j })));
        const ids = ['d-7', 'd-19999', 'missing', 'd-7', 'd-1234'];
        assert.deepEqual((await col.find({ _id: { $in: ids } }).toArray()).map((d) => d.n).sort((a, b) => a - b), [7, 1234, 19999]);
        const started = performance.now();
        for (let k = 0; k < 10; k++) await col.find({ _id: { $in: Array.from({ length: 10 }, (_, i) => `d-${k * 1000 + i}`) } }).toArray();
        const perRead = (performance.now() - started) / 10;
        assert.ok(perRead < 250, `a read of 10 ids took ${perRead.toFixed(0)} ms`);
      } finally {
        await col.drop().catch(() => undefined);
      }
    });

    it('applies an update command of fenced writes statement by statement: a stale fence matches nothing, the others apply', async function () {
      const col = w.store.db.collection<{ _id: string; fence: number; v: number }>(`fenced_${randomUUID().slice(0, 8)}`);
      try {
        await col.insertMany([{ _id: 'a', fence: 1, v: 0 }, { _id: 'b', fence: 5, v: 0 }, { _id: 'c', fence: 2, v: 0 }]);
        const set = { $set: { v: 1 }, $inc: { fence: 1 } };
        const r = await col.bulkWrite(
          [{ updateOne: { filter: { _id: 'a', fence: 1 }, update: set } }, { updateOne: { filter: { _id: 'b', fence: 4 }, update: set } }, { updateOne: { filter: { _id: 'c', fence: 2 }, update: set } }],
          { ordered: false },
        );
        assert.equal(r.matchedCount, 2);
        assert.deepEqual(await col.find({}).sort({ _id: 1 }).toArray(), [{ _id: 'a', fence: 2, v: 1 }, { _id: 'b', fence: 5, v: 0 }, { _id: 'c', fence: 3, v: 1 }]);
        const none = await col.bulkWrite([{ updateOne: { filter: { _id: 'a', fence: 1 }, update: set } }, { updateOne: { filter: { _id: 'zz', fence: 1 }, update: set } }]);
        assert.equal(none.matchedCount, 0);
      } finally {
        await col.drop().catch(() => undefined);
      }
    });
    it("lets an insert through while an update command of many statements holds the write lock (a capture does not wait behind a batch end)", async function () {
      const big = w.store.db.collection<{ _id: string; n: number }>(`slow_update_${randomUUID().slice(0, 8)}`);
      const other = w.store.db.collection<{ _id: string }>(`quick_insert_${randomUUID().slice(0, 8)}`);
      try {
        await big.insertMany(Array.from({ length: 3000 }, (_, i) => ({ _id: `d-${i}`, n: i })));
        await other.insertOne({ _id: 'warm' });
        // Filters on a field FerretDB v1 has no index for: every statement reads the whole collection.
        // Seconds long, so the insert's own wait for SQLite's single writer (whose busy handler sleeps up
        // to 100 ms a try) stays well inside it on a loaded machine; beyond FerretDB's pool, so in parts.
        const statements = Array.from({ length: 120 }, (_, i) => ({ updateOne: { filter: { n: i * 7 }, update: { $set: { touched: true } } } }));
        const started = performance.now();
        let updateDone = 0;
        const update = big.bulkWrite(statements, { ordered: false }).then((r) => {
          updateDone = performance.now();
          return r;
        });
        await new Promise((resolve) => setTimeout(resolve, 50));
        await other.insertOne({ _id: 'during' });
        const insertDone = performance.now();
        assert.equal((await update).modifiedCount, 120);
        const took = `insert done at ${(insertDone - started).toFixed(0)} ms, update at ${(updateDone - started).toFixed(0)} ms`;
        assert.ok(updateDone > 0 && insertDone < updateDone, `the insert waited for the whole update command (${took})`);
        assert.equal(await other.countDocuments({ _id: 'during' }), 1);
      } finally {
        await big.drop().catch(() => undefined);
        await other.drop().catch(() => undefined);
      }
    });

    it('answers update and delete commands of more statements than FerretDB has pooled connections (it would wait forever), forwarded in parts', async function () {
      const col = w.store.db.collection<{ _id: string; n: number; v?: number }>(`parts_${randomUUID().slice(0, 8)}`);
      try {
        await col.insertMany(Array.from({ length: 300 }, (_, i) => ({ _id: `d-${i}`, n: i })));
        const updates = Array.from({ length: 260 }, (_, i) =>
          i < 250 ? { updateOne: { filter: { _id: `d-${i}` }, update: { $set: { v: i } } } } : { updateOne: { filter: { _id: `new-${i}` }, update: { $set: { v: i } }, upsert: true } },
        );
        const updated = await col.bulkWrite(updates, { ordered: false });
        assert.deepEqual([updated.matchedCount, updated.modifiedCount, updated.upsertedCount], [250, 250, 10]);
        assert.equal(await col.countDocuments({ v: { $exists: true } }), 260);
        const fenced = await col.bulkWrite(
          Array.from({ length: 150 }, (_, i) => ({ updateOne: { filter: { _id: `d-${i}`, n: i % 2 === 0 ? i : -1 }, update: { $set: { v: -i } } } })),
          { ordered: false },
        );
        assert.equal(fenced.matchedCount, 75, 'a compare-and-set by _id still matches only where it holds');
        const deleted = await col.bulkWrite(Array.from({ length: 220 }, (_, i) => ({ deleteOne: { filter: { _id: `d-${i}` } } })));
        assert.equal(deleted.deletedCount, 220);
        assert.equal(await col.countDocuments(), 90);
      } finally {
        await col.drop().catch(() => undefined);
      }
    });
  });

  describe('hot paths address documents by _id only', function () {
    it('holds, releases, debt, repayments and daily spend', async function () {
      const b = await newBorrower(w);
      const dayId = `${b.agentKeyId}:2000-01-01`;
      const [hold, other] = [randomUUID(), randomUUID()];
      const commands = await recordStoreCommands(w, async (mc) => {
        assert.equal(await holdCredit(mc, b.borrowerId, hold, 10), 'held');
        assert.equal(await holdCredit(mc, b.borrowerId, other, 10), 'held');
        assert.equal(await releaseHold(mc, b.borrowerId, hold), true);
        assert.equal(await convertHoldToDebt(mc, b.borrowerId, other), true);
        assert.equal(await bookRepayment(mc, b.borrowerId, randomUUID(), 10), true);
        assert.equal(await chargeDailySpend(mc, { dayId, agentKeyId: b.agentKeyId, intentId: hold, amount: 10, dailyLimit: 100 }), 'charged');
        await refundDailySpend(mc, dayId, hold);
      });
      assert.ok(commands.some((cmd) => cmd.collection === 'borrowers' && cmd.name === 'update'));
      assert.deepEqual(scans(commands), []);
    });

    it('prepare_x402_payment, from the order claim to the stored intent and its hold', async function () {
      const b = await newBorrower(w);
      const m = await newMerchant(w, 'Store access');
      const deps = await agentDeps(w);
      let prepared: PreparedPayment | undefined;
      const commands = await recordStoreCommands(w, async (mc) => {
        const monitored = { ...deps, store: { ...deps.store, c: mc } };
        prepared = await preparePayment(monitored, b.principal, { payment_required: paymentRequiredHeader(deps, m, '1000'), order_ref: 'audit-1' });
      });
      assert.equal((await findBorrower(c, b.borrowerId))?.holds[prepared?.spend_intent_id ?? ''], 1000);
      assert.ok(commands.some((cmd) => cmd.collection === 'agent_keys'), 'the agent key was read');
      assert.deepEqual(scans(commands), []);
    });

    it("a batch end's borrowers and the gather's fates: one read by ids and one update of fenced writes, whatever their number; the batch board one compare-and-set", async function () {
      const borrowers = await Promise.all([newBorrower(w), newBorrower(w), newBorrower(w)]);
      const holds = new Map(borrowers.map((b) => [b.borrowerId, [randomUUID(), randomUUID()]]));
      for (const [borrowerId, ids] of holds) for (const id of ids) assert.equal(await holdCredit(c, borrowerId, id, 10), 'held');
      const fates = Array.from({ length: 3 }, () => ({ _id: randomUUID(), fate: 'CONSUMED' as const, paymentId: randomUUID(), at: new Date() }));
      await c.spendIntentFates.insertMany(fates);
      const boards: AnnouncedBoards = new Map();
      const shard = 1000 + Math.floor(Math.random() * 1e6);
      await announceBatch(c, shard, 'first', boards);
      const commands = await recordStoreCommands(w, async (mc) => {
        await closeHoldsOfBorrowers(mc, holds, 'debt');
        const read = await findSpendIntentFates(mc, [...fates.map((f) => f._id), randomUUID()]);
        assert.deepEqual([...read.keys()].sort(), fates.map((f) => f._id).sort());
        await announceBatch(mc, shard, 'second', boards);
      });
      for (const b of borrowers) assert.equal((await c.borrowers.findOne({ _id: b.borrowerId }))?.debt, 20);
      assert.deepEqual((await c.shardStatus.findOne({ _id: `batches-${shard}` }))?.batchIds, ['first', 'second']);
      const count = (collection: string) => commands.filter((cmd) => cmd.collection === collection).map((cmd) => cmd.name);
      assert.deepEqual(count('borrowers'), ['find', 'update']);
      assert.deepEqual(count('spend_intent_fates'), ['find']);
      assert.deepEqual(count('settlement_shards'), ['update']);
      assert.deepEqual(scans(commands), []);
    });

    it('signing request transitions', async function () {
      const now = new Date();
      const doc = await ensureSigningRequest(c, pendingSigningRequest({ now }));
      const commands = await recordStoreCommands(w, async (mc) => {
        assert.equal(await markSigned(mc, doc._id, '0x01', new Date()), true);
        await closeSigningRequest(mc, doc._id, { status: 'COMPLETED', result: {} }, new Date());
      });
      assert.equal((await c.signingRequests.findOne({ _id: doc._id }))?.status, 'COMPLETED');
      assert.deepEqual(scans(commands), []);
    });

    it('the rate limiter claims a slot with one insert by _id and reads nothing', async function () {
      const bucketId = `${randomUUID()}:verify`;
      const policy = { perMinute: 60, burst: 5 };
      const now = Date.now();
      const decisions: boolean[] = [];
      const commands = await recordStoreCommands(w, async (mc) => {
        for (let i = 0; i < 6; i++) decisions.push((await consumeRate(mc, bucketId, policy, now)).allowed);
      });
      assert.deepEqual(decisions, [true, true, true, true, true, false]);
      assert.deepEqual(
        commands.map((cmd) => `${cmd.name} ${cmd.collection}`),
        Array.from({ length: 5 }, () => 'insert rate_limit_slots'),
        'five inserts; the sixth request is refused without a query',
      );
      const first = Math.floor(now / 1000);
      const stored = await Promise.all(Array.from({ length: 6 }, (_, i) => c.rateLimitSlots.findOne({ _id: slotId(`${bucketId}@60`, first + i) })));
      assert.deepEqual(stored.map((d) => d !== null), [true, true, true, true, true, false], "the window's five slots, lowest first");
    });
  });
});
