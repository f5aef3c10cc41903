import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { erc20BalanceOf, pollUntil, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import type { AnvilControl } from '../support/anvil-control.js';
import { creditPool, type CreditPool } from './credit-pool.js';
import { assertLedgerAgrees, settledEventsFor } from '../helpers/ledger.js';
import { capturePayments, newParties, paymentViews, waitForPayments, type CapturedPayment } from '../helpers/captures.js';
import { findBorrower } from '../../src/store/borrowers.js';

const CONFIRMATIONS = 2;

/**
 * Lets the worker broadcast the payments' next settleBatch, empties the pool while the transaction
 * waits in the mempool, mines it (it reverts on chain, past simulation) with enough confirmations,
 * and refills the pool. Returns the reverted transaction.
 */
async function revertNextBroadcast(w: World, chain: AnvilControl, pool: CreditPool, payments: CapturedPayment[], earlier: Hex[]): Promise<Hex> {
  const [doc] = await waitForPayments(w, payments, 'SUBMITTED in a new transaction', (d) => d.status === 'SUBMITTED' && !earlier.includes(d.transaction as Hex));
  const tx = doc!.transaction as Hex;
  await chain.waitUntilPending(tx); // the settleBatch transaction waits in the mempool
  await pool.drain();
  await chain.mine(CONFIRMATIONS);
  const receipt = await w.publicClient.getTransactionReceipt({ hash: tx });
  assert.equal(receipt.status, 'reverted', 'the mined settleBatch reverted on chain');
  await waitForPayments(w, payments, 'back in the queue', (d) => d.status === 'QUEUED' && d.transaction === undefined);
  await pool.restore();
  return tx;
}

describe('fault: a settleBatch transaction that reverts on chain', function () {
  this.timeout(300_000);
  // One shard whose batches close when full (each test captures 3): the batch holds all of a test's
  // payments however slowly they arrive, so a busy machine cannot split them over two batches.
  const env = useIsolatedStack({
    env: { CONFIRMATIONS: String(CONFIRMATIONS), SETTLEMENT_SHARDS: '1', BATCH_MAX_PAYMENTS: '3', BATCH_MAX_WAIT_MS: '60000', BATCH_MAX_ATTEMPTS: '3' },
  });
  let pool: CreditPool;

  before(async function () {
    const { world: w, chain } = env();
    pool = await creditPool(w, chain);
  });

  beforeEach(async function () {
    // Blocks only when the test mines them, so a broadcast transaction waits until the pool is drained.
    await env().chain.intervalMining(0);
    await env().chain.automine(false);
  });

  it('requeues the batch and a later attempt settles every payment exactly once', async function () {
    const { world: w, chain } = env();
    const parties = await newParties(w, 'Revert-once merchant');
    const payments = await capturePayments(w, parties, [5001n, 5002n, 5003n]);

    const reverted = await revertNextBroadcast(w, chain, pool, payments, []);
    await chain.intervalMining(1);

    await assertLedgerAgrees(w, payments, { timeoutMs: 90_000 });
    const final = await paymentViews(w, payments.map((p) => p.paymentId));
    assert.ok(final.every((d) => d.transaction !== reverted), 'paid by a later transaction, not the reverted one');
    const revertedLogs = (await settledEventsFor(w, payments.map((p) => p.paymentId))).filter((l) => l.transactionHash === reverted);
    assert.equal(revertedLogs.length, 0);
  });

  it(`fails the payments with a reason after ${3} on-chain reverts, pays nothing and releases the credit`, async function () {
    const { world: w, chain } = env();
    const parties = await newParties(w, 'Revert-always merchant');
    const payments = await capturePayments(w, parties, [5101n, 5102n, 5103n]);

    const reverted: Hex[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt < 3) reverted.push(await revertNextBroadcast(w, chain, pool, payments, reverted));
      else {
        // The last revert: the batcher gives up instead of requeueing.
        const [doc] = await waitForPayments(w, payments, 'SUBMITTED again', (d) => d.status === 'SUBMITTED' && !reverted.includes(d.transaction as Hex));
        await pool.drain();
        await chain.mine(CONFIRMATIONS);
        reverted.push(doc!.transaction as Hex);
      }
    }
    for (const p of payments) {
      const r = await pollUntil(w, p.merchant, p.paymentId, 'FAILED', 60_000);
      assert.match(r.failureReason, /^settlement_reverted: batch transaction reverted 3 times$/);
    }
    await pool.restore();
    await chain.intervalMining(1);

    for (const tx of reverted) assert.equal((await w.publicClient.getTransactionReceipt({ hash: tx })).status, 'reverted');
    assert.equal((await settledEventsFor(w, payments.map((p) => p.paymentId))).length, 0, 'no PaymentSettled');
    const payout = await w.publicClient.readContract({ address: w.asset, abi: [erc20BalanceOf], functionName: 'balanceOf', args: [parties.merchant.payoutAddress] });
    assert.equal(payout, 0n);
    const debt = await w.publicClient.readContract({
      address: w.settlement,
      abi: creditSettlementAbi,
      functionName: 'debtOf',
      args: [uuidToBytes32(parties.borrower.borrowerId) as Hex],
    });
    assert.equal(debt, 0n);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const b = await findBorrower(w.store.c, parties.borrower.borrowerId);
      if (b && Object.keys(b.holds).length === 0 && b.available === b.creditLimit && b.debt === 0) break;
      assert.ok(Date.now() < deadline, `the failed payments' credit comes back: ${JSON.stringify(b)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const docs = await paymentViews(w, payments.map((p) => p.paymentId));
    assert.equal(docs.length, payments.length);
    assert.ok(docs.every((d) => d.status === 'FAILED' && d.failureReason?.startsWith('settlement_reverted')), 'the store (the claimed batch) says FAILED');
  });
});
