import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionReceiptNotFoundError, type Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { testUsdcAbi } from '../../src/chain/abi.js';
import { buildRepaymentAuthorization, receiveWithAuthorizationTypedData, repayWithAuthorization } from '../../src/chain/eip3009.js';
import { NonceManager } from '../../src/chain/nonce-manager.js';
import type { ChainContext } from '../../src/chain/context.js';
import { awaitBatchConfirmation, debtOf, submitSettleBatch, type SettlementItem } from '../../src/chain/settlement.js';
import { DEPLOYER_KEY, startOwnAnvil, type OwnAnvil } from '../helpers/anvil.js';

const merchant = { id: randomUUID(), payTo: privateKeyToAccount(generatePrivateKey()).address };

function batchFor(borrowers: readonly string[], amount: bigint): SettlementItem[] {
  return borrowers.map((borrowerId) => ({ paymentId: randomUUID(), borrowerId, merchantId: merchant.id, payTo: merchant.payTo, amount }));
}

describe('chain: the settler nonce manager on anvil', function () {
  this.timeout(120_000);
  let anvil: OwnAnvil;
  let ctx: ChainContext;
  let nonces: NonceManager;

  before(async function () {
    anvil = await startOwnAnvil({ poolFunding: 10n ** 12n });
    nonces = new NonceManager(anvil.settler.publicClient, anvil.settler.walletClient, { replaceAfterMs: 300 });
    ctx = { ...anvil.ctx, nonces };
  });

  after(async function () {
    await anvil?.stop();
  });

  const receipt = (hash: Hash) => anvil.ctx.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 20_000 });

  it('settleBatch and repayment sent at the same instant, 12 rounds: one nonce each, every one mined', async function () {
    const borrowers = Array.from({ length: 3 }, () => randomUUID());
    const wallet = privateKeyToAccount(generatePrivateKey());
    const deployer = privateKeyToAccount(DEPLOYER_KEY);
    await receipt(await anvil.ctx.walletClient.writeContract({ account: deployer, address: anvil.deployment.asset, abi: testUsdcAbi, functionName: 'mint', args: [wallet.address, 10n ** 9n] }));
    // Debt first, so every round's repayments have something to pay down.
    const opening = await submitSettleBatch(ctx, randomUUID(), batchFor(borrowers, 1_000_000n));
    assert.equal(opening.kind, 'sent');
    await receipt((opening as { txHash: Hash }).txHash);
    const first = await anvil.ctx.publicClient.getTransactionCount({ address: nonces.address, blockTag: 'pending' });

    const hashes: Hash[] = [];
    for (let round = 0; round < 12; round++) {
      const borrowerId = borrowers[round % borrowers.length] as string;
      const authorization = buildRepaymentAuthorization(anvil.deployment, { borrowerId, from: wallet.address, value: 1_000n });
      const signature = await wallet.signTypedData(receiveWithAuthorizationTypedData(anvil.deployment, authorization));
      const sent = await Promise.all([
        submitSettleBatch(ctx, randomUUID(), batchFor(borrowers, 10n)),
        repayWithAuthorization(ctx, { borrowerId, authorization, signature }),
        submitSettleBatch(ctx, randomUUID(), batchFor(borrowers, 10n)),
      ]);
      for (const s of sent) hashes.push(typeof s === 'string' ? s : (s as { txHash: Hash }).txHash);
    }
    const receipts = await Promise.all(hashes.map(receipt));
    assert.deepEqual(receipts.map((r) => r.status), hashes.map(() => 'success'));
    const used = (await Promise.all(hashes.map((hash) => anvil.ctx.publicClient.getTransaction({ hash })))).map((t) => t.nonce).sort((a, b) => a - b);
    assert.deepEqual(used, Array.from({ length: hashes.length }, (_, i) => first + i), 'one nonce each, none skipped');
    for (const [i, borrowerId] of borrowers.entries()) {
      const repaid = BigInt([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].filter((r) => r % borrowers.length === i).length) * 1_000n;
      assert.equal(await debtOf(anvil.ctx, borrowerId), 1_000_000n + 24n * 10n - repaid, 'the chain booked every batch and repayment once');
    }
    await nonces.check();
    assert.equal(nonces.pending, 0, 'nothing left in flight');
  });

  it('replaces a stuck settleBatch with the same nonce and a higher fee, and the batch confirms under the new hash', async function () {
    await anvil.test.setAutomine(false);
    try {
      const batchId = randomUUID();
      const sent = await submitSettleBatch(ctx, batchId, batchFor([randomUUID()], 5_000n));
      assert.equal(sent.kind, 'sent');
      const stuck = (sent as { txHash: Hash }).txHash;
      const original = await anvil.ctx.publicClient.getTransaction({ hash: stuck });
      const deadline = Date.now() + 10_000;
      while (nonces.currentHash(stuck) === stuck) {
        assert.ok(Date.now() < deadline, 'the stuck transaction was never replaced');
        await sleep(100);
        await nonces.check();
      }
      const replacement = nonces.currentHash(stuck);
      const replaced = await anvil.ctx.publicClient.getTransaction({ hash: replacement });
      assert.equal(replaced.nonce, original.nonce, 'same nonce');
      assert.ok((replaced.maxFeePerGas ?? 0n) >= ((original.maxFeePerGas ?? 0n) * 125n) / 100n, 'fee raised by at least 25 %');
      assert.equal(replaced.input, original.input, 'the same call');

      await anvil.test.mine({ blocks: 1 });
      const confirmed = await awaitBatchConfirmation(anvil.ctx, {
        batchId,
        txHash: stuck,
        confirmations: 1,
        pollMs: 50,
        timeoutMs: 15_000,
        currentHash: (h) => nonces.currentHash(h),
      });
      assert.equal(confirmed.status, 'confirmed');
      assert.equal((confirmed as { txHash: Hash }).txHash, replacement);
      await assert.rejects(anvil.ctx.publicClient.getTransactionReceipt({ hash: stuck }), TransactionReceiptNotFoundError, 'the stuck one never mined');
    } finally {
      await anvil.test.setAutomine(true);
    }
    await nonces.check();
    assert.equal(nonces.pending, 0);
  });

  it('a broadcast the node refuses takes no nonce: the next send fills it', async function () {
    const before = await anvil.ctx.publicClient.getTransactionCount({ address: nonces.address, blockTag: 'pending' });
    await assert.rejects(nonces.send({ to: anvil.deployment.settlement, data: '0x', gas: 1_000n }), /gas/i);
    const ok = await submitSettleBatch(ctx, randomUUID(), batchFor([randomUUID()], 7n));
    const tx = await anvil.ctx.publicClient.getTransaction({ hash: (ok as { txHash: Hash }).txHash });
    assert.equal(tx.nonce, before);
    assert.equal((await receipt(tx.hash)).status, 'success');
  });
});
