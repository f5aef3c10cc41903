import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { call, pollUntil, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { capturePayments, newParties, paymentViews, waitForPayments, type CapturedPayment } from '../helpers/captures.js';

const CONFIRMATIONS = 3;

/** For `ms`, every poll of every payment still answers SUBMITTED: nothing was confirmed off too few (or orphaned) blocks. */
async function staysSubmitted(w: World, payments: CapturedPayment[], ms: number, why: string): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    for (const p of payments) {
      const res = await call(w, 'GET', `/facilitator/payments/${p.paymentId}`, { token: p.merchant.apiKey });
      assert.equal(res.json.status, 'SUBMITTED', `${why}: ${JSON.stringify(res.json)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe(`fault: a chain reorg while a batch is being confirmed (CONFIRMATIONS=${CONFIRMATIONS})`, function () {
  this.timeout(300_000);
  // One settlement shard whose batches close when full (each test captures 3): the test reorganises the
  // blocks around one settleBatch transaction that holds all of its payments, however slowly they arrive.
  const env = useIsolatedStack({
    env: { CONFIRMATIONS: String(CONFIRMATIONS), SETTLEMENT_SHARDS: '1', BATCH_MAX_PAYMENTS: '3', BATCH_MAX_WAIT_MS: '60000' },
  });

  beforeEach(async function () {
    // Blocks only when the test mines them.
    await env().chain.intervalMining(0);
    await env().chain.automine(false);
  });

  async function broadcastAndMine(w: World, payments: CapturedPayment[], blocks: number) {
    const { chain } = env();
    const [doc] = await waitForPayments(w, payments, 'SUBMITTED', (d) => d.status === 'SUBMITTED');
    const tx = doc!.transaction as Hex;
    await chain.waitUntilPending(tx);
    // Polls learn of a sent batch from its announcement a moment after the store records it.
    for (const p of payments) await pollUntil(w, p.merchant, p.paymentId, 'SUBMITTED', 30_000);
    const raw = await chain.rawTransaction(tx);
    await chain.mine(blocks);
    const mined = await w.publicClient.getTransactionReceipt({ hash: tx });
    return { tx, raw, minedIn: mined.blockNumber, orphan: mined.blockHash };
  }

  it('re-mined in another block by a 2-block reorg: confirmations count from the canonical block only', async function () {
    const { world: w, chain } = env();
    const parties = await newParties(w, 'Reorg re-mined merchant');
    const payments = await capturePayments(w, parties, [6001n, 6002n, 6003n]);

    const { tx, raw, minedIn, orphan } = await broadcastAndMine(w, payments, 2);
    await staysSubmitted(w, payments, 2000, 'two of three confirmations');

    // Both blocks replaced; the settlement lands one block later than before.
    await chain.reorg(2, [{ raw, blockIndex: 1 }]);
    const remined = await w.publicClient.getTransactionReceipt({ hash: tx });
    assert.equal(remined.blockNumber, minedIn + 1n);
    await chain.mine(1);
    // Counted from the orphaned block this would be 3 confirmations; on the canonical chain it is 2.
    await staysSubmitted(w, payments, 3000, 'counted from the orphaned block');

    await chain.mine(1);
    await assertLedgerAgrees(w, payments, { timeoutMs: 60_000 });
    const docs = await paymentViews(w, payments.map((p) => p.paymentId));
    assert.equal(docs.length, payments.length);
    assert.ok(docs.every((d) => d.blockNumber === String(minedIn + 1n)), 'confirmed in the block that replaced the orphan');
    assert.notEqual((await w.publicClient.getBlock({ blockNumber: minedIn })).hash, orphan, 'the first block is gone from the chain');
  });

  it('dropped by a 2-block reorg: never CONFIRMED off the orphaned block; the worker hands the node the same transaction again within seconds and it settles once', async function () {
    const { world: w, chain } = env();
    const parties = await newParties(w, 'Reorg dropped merchant');
    const payments = await capturePayments(w, parties, [6101n, 6102n, 6103n]);

    const { tx } = await broadcastAndMine(w, payments, 2);
    const lostAt = Date.now();
    await chain.reorg(2);
    await chain.mine(1);
    await staysSubmitted(w, payments, 3000, 'the transaction left the chain');

    // The settler's nonce manager sees its mined nonce go down and broadcasts the same signed
    // transaction again (same hash): no 30 s wait for a drop, no second transaction.
    const w0 = w.publicClient;
    for (;;) {
      if (await w0.getTransaction({ hash: tx }).then(() => true, () => false)) break;
      assert.ok(Date.now() - lostAt < 15_000, 'the node was handed the lost transaction again within 15 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    await chain.intervalMining(1);
    await assertLedgerAgrees(w, payments, { timeoutMs: 60_000 });
    const docs = await paymentViews(w, payments.map((p) => p.paymentId));
    assert.ok(docs.every((d) => d.transaction === tx), 'paid by the transaction first sent, under its hash');
  });
});
