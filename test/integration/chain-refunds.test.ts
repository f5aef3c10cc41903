import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { parseSignature, type Hash, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { creditSettlementAbi, testUsdcAbi } from '../../src/chain/abi.js';
import type { Deployment } from '../../src/chain/deploy.js';
import { buildRepaymentAuthorization, receiveWithAuthorizationTypedData, repayWithAuthorization, type Eip3009Authorization } from '../../src/chain/eip3009.js';
import { contractRevert } from '../../src/chain/errors.js';
import { entriesRoot, entryProof, type SettlementEntry } from '../../src/chain/merkle.js';
import {
  RefundRevertedError,
  buildRefundAuthorization,
  readRefundedEvents,
  refundLogsIn,
  refundTypedData,
  refundedOf,
  settledBatchEntries,
  submitRefund,
} from '../../src/chain/refund.js';
import type { ChainContext } from '../../src/chain/context.js';
import { assetBalanceOf, buildSettleBatchArgs, debtOf, isBatchSettled, submitSettleBatch, type SettlementItem } from '../../src/chain/settlement.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { DEPLOYER_KEY, startOwnAnvil, type OwnAnvil } from '../helpers/anvil.js';

const POOL = 10n ** 12n;

interface Settled {
  batchId: Hex;
  txHash: Hash;
  items: SettlementItem[];
  entries: SettlementEntry[];
}

describe('chain: refunds of settled payments', function () {
  this.timeout(120_000);
  let anvil: OwnAnvil;
  let deployment: Deployment;
  let ctx: ChainContext;
  // The payout address is a key of ours: it has to sign the ReceiveWithAuthorization that pays a refund back.
  const merchant = privateKeyToAccount(generatePrivateKey());
  const merchantId = randomUUID();

  before(async function () {
    anvil = await startOwnAnvil({ poolFunding: POOL });
    ({ deployment, ctx } = anvil);
  });

  after(async function () {
    await anvil?.stop();
  });

  async function mined(hash: Hash) {
    return ctx.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  }

  async function settle(n: number, borrowers: readonly string[] = [randomUUID()]): Promise<Settled> {
    const batchId = randomUUID();
    const items = Array.from({ length: n }, (_, i) => ({
      paymentId: randomUUID(),
      borrowerId: borrowers[i % borrowers.length]!,
      merchantId,
      payTo: merchant.address,
      amount: BigInt(10_000 + i),
    }));
    const sent = await submitSettleBatch(ctx, batchId, items);
    assert.equal(sent.kind, 'sent');
    const txHash = (sent as { txHash: Hash }).txHash;
    assert.equal((await mined(txHash)).status, 'success');
    const [batchIdHex, entries] = buildSettleBatchArgs(batchId, items);
    return { batchId: batchIdHex, txHash, items, entries: [...entries] };
  }

  async function signedRefund(paymentId: string, value: bigint, signer: PrivateKeyAccount = merchant) {
    const authorization = buildRefundAuthorization(deployment, { paymentId, from: signer.address, value });
    return { authorization, signature: await signer.signTypedData(refundTypedData(deployment, authorization)) };
  }

  /** The error refundWithAuthorization reverts with for hand-made arguments (undefined: it would succeed). */
  async function refundRevert(batchId: Hex, entry: SettlementEntry, proof: readonly Hex[], path: bigint, a: Eip3009Authorization, signature: Hex) {
    const { r, s, yParity } = parseSignature(signature);
    const auth = { from: a.from, value: a.value, validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce, v: 27 + yParity, r, s };
    try {
      await ctx.publicClient.simulateContract({
        account: ctx.account,
        address: deployment.settlement,
        abi: creditSettlementAbi,
        functionName: 'refundWithAuthorization',
        args: [batchId, entry, proof, path, auth],
      });
      return undefined;
    } catch (err) {
      return contractRevert(err)?.errorName ?? String(err);
    }
  }

  const revertsWith = (name: string) => (err: unknown) => err instanceof RefundRevertedError && err.errorName === name;

  it('stores the root of the batch entries (batches of 1, 2, 3, 4, 5, 7, 8, 13, 21 and 100)', async function () {
    for (const n of [1, 2, 3, 4, 5, 7, 8, 13, 21, 100]) {
      const batch = await settle(n, [randomUUID(), randomUUID()]);
      const root = await ctx.publicClient.readContract({ address: deployment.settlement, abi: creditSettlementAbi, functionName: 'batchRoot', args: [batch.batchId] });
      assert.equal(root, entriesRoot(batch.entries), `batch of ${n}`);
    }
    assert.equal(await isBatchSettled(ctx, randomUUID()), false);
  });

  it('decodes the entries a settleBatch transaction sent, and refuses any other transaction', async function () {
    const batch = await settle(3);
    assert.deepEqual(await settledBatchEntries(ctx, batch.txHash), { batchId: batch.batchId, entries: batch.entries });

    const deployer = privateKeyToAccount(DEPLOYER_KEY);
    const mint = await ctx.walletClient.writeContract({ account: deployer, address: deployment.asset, abi: testUsdcAbi, functionName: 'mint', args: [merchant.address, 1n] });
    await mined(mint);
    await assert.rejects(settledBatchEntries(ctx, mint), /not a call to the settlement contract/);
    const other = await ctx.walletClient.writeContract({
      account: deployer,
      address: deployment.settlement,
      abi: creditSettlementAbi,
      functionName: 'setSettler',
      args: [privateKeyToAccount(generatePrivateKey()).address, false],
    });
    await mined(other);
    await assert.rejects(settledBatchEntries(ctx, other), /calls setSettler, not settleBatch/);
  });

  it('refunds part and then the rest of a payment: debt and pool move by exactly the refunds, and no more is taken', async function () {
    const borrowerId = randomUUID();
    const batch = await settle(3, [borrowerId]);
    const { batchId, entries } = await settledBatchEntries(ctx, batch.txHash);
    const payment = batch.items[1]!;
    const debt0 = await debtOf(ctx, borrowerId);
    const pool0 = await assetBalanceOf(ctx, deployment.settlement);
    const merchant0 = await assetBalanceOf(ctx, merchant.address);

    const first = await signedRefund(payment.paymentId, payment.amount / 4n);
    const receipt = await mined(await submitRefund(ctx, { batchId, entries, paymentId: payment.paymentId, ...first }));
    assert.equal(receipt.status, 'success');
    const expected = (amount: bigint, nonce: Hex) => ({
      paymentId: payment.paymentId,
      borrowerId,
      merchantId,
      from: merchant.address,
      nonce,
      amount,
      debtReduced: amount,
    });
    const strip = ({ txHash: _t, blockNumber: _b, logIndex: _l, ...rest }: ReturnType<typeof refundLogsIn>[number]) => rest;
    assert.deepEqual(refundLogsIn(receipt.logs, deployment.settlement).map(strip), [expected(first.authorization.value, first.authorization.nonce)]);
    assert.equal(await refundedOf(ctx, payment.paymentId), first.authorization.value);

    // The asset refuses the same signed authorization a second time, though the payment has room left.
    await assert.rejects(submitRefund(ctx, { batchId, entries, paymentId: payment.paymentId, ...first }), revertsWith('AuthorizationUsedOrCanceled'));
    await assert.rejects(submitRefund(ctx, { batchId, entries, paymentId: payment.paymentId, ...(await signedRefund(payment.paymentId, 0n)) }), revertsWith('InvalidAmount'));
    await assert.rejects(
      submitRefund(ctx, { batchId, entries, paymentId: payment.paymentId, ...(await signedRefund(payment.paymentId, payment.amount)) }),
      revertsWith('RefundExceedsPayment'),
    );

    const rest = await signedRefund(payment.paymentId, payment.amount - first.authorization.value);
    const second = await mined(await submitRefund(ctx, { batchId, entries, paymentId: payment.paymentId, ...rest }));
    console.log(`      refundWithAuthorization gas (batch of 3): first refund of the payment ${receipt.gasUsed}, second ${second.gasUsed}`);
    assert.deepEqual(refundLogsIn(second.logs).map(strip), [expected(rest.authorization.value, rest.authorization.nonce)]);
    assert.equal(await refundedOf(ctx, payment.paymentId), payment.amount);
    assert.equal(await debtOf(ctx, borrowerId), debt0 - payment.amount);
    assert.equal(await assetBalanceOf(ctx, deployment.settlement), pool0 + payment.amount);
    assert.equal(await assetBalanceOf(ctx, merchant.address), merchant0 - payment.amount);

    await assert.rejects(
      submitRefund(ctx, { batchId, entries, paymentId: payment.paymentId, ...(await signedRefund(payment.paymentId, 1n)) }),
      revertsWith('RefundExceedsPayment'),
    );
    const logged = await readRefundedEvents(ctx, { fromBlock: receipt.blockNumber });
    assert.deepEqual(
      logged.map((e) => [e.paymentId, e.amount, e.txHash]),
      [
        [payment.paymentId, first.authorization.value, receipt.transactionHash],
        [payment.paymentId, rest.authorization.value, second.transactionHash],
      ],
    );
  });

  it('cannot be redirected: to another payment, an altered entry, another batch, or an unsettled one', async function () {
    const batch = await settle(4, [randomUUID(), randomUUID()]);
    const other = await settle(2);
    const [p0, p1] = [batch.items[0]!, batch.items[1]!];
    const entry = batch.entries[0]!;
    const { proof, path } = entryProof(batch.entries, 0);
    const { authorization, signature } = await signedRefund(p0.paymentId, 100n);
    const redeem = (batchId: Hex, e: SettlementEntry, pr: readonly Hex[], pa: bigint) => refundRevert(batchId, e, pr, pa, authorization, signature);

    assert.equal(await redeem(batch.batchId, entry, proof, path), undefined);
    // The nonce names p0: p1's genuine entry and proof do not take p0's signed refund.
    await assert.rejects(
      submitRefund(ctx, { batchId: batch.batchId, entries: batch.entries, paymentId: p1.paymentId, authorization, signature }),
      revertsWith('NonceNotBoundToPayment'),
    );
    const p1Proof = entryProof(batch.entries, 1);
    assert.equal(await redeem(batch.batchId, batch.entries[1]!, p1Proof.proof, p1Proof.path), 'NonceNotBoundToPayment');
    // The borrower and the cap come from the settled entry.
    assert.equal(await redeem(batch.batchId, { ...entry, borrowerId: batch.entries[1]!.borrowerId }, proof, path), 'NotInBatch');
    assert.equal(await redeem(batch.batchId, { ...entry, amount: entry.amount * 10n }, proof, path), 'NotInBatch');
    assert.equal(await redeem(batch.batchId, { ...entry, merchantId: uuidToBytes32(randomUUID()) }, proof, path), 'NotInBatch');
    // Another batch's proof, or this proof against another batch or one never settled.
    const otherProof = entryProof(other.entries, 0);
    assert.equal(await redeem(batch.batchId, entry, otherProof.proof, otherProof.path), 'NotInBatch');
    assert.equal(await redeem(other.batchId, entry, proof, path), 'NotInBatch');
    assert.equal(await redeem(uuidToBytes32(randomUUID()), entry, proof, path), 'NotInBatch');
    assert.equal(await redeem(uuidToBytes32(randomUUID()), entry, [], 0n), 'NotInBatch');
    // A proof is exactly one path: no stray bits past it.
    assert.equal(await redeem(batch.batchId, entry, proof, path | (1n << BigInt(proof.length))), 'NotInBatch');
    // Signed by someone other than `from`: the asset refuses.
    const forged = await signedRefund(p0.paymentId, 100n, privateKeyToAccount(generatePrivateKey()));
    assert.equal(await refundRevert(batch.batchId, entry, proof, path, { ...forged.authorization, from: merchant.address }, forged.signature), 'InvalidSignature');
  });

  it('reduces the debt of a borrower who repaid first only to zero, and says so in debtReduced', async function () {
    const borrowerId = randomUUID();
    const batch = await settle(1, [borrowerId]);
    const payment = batch.items[0]!;
    const wallet = privateKeyToAccount(generatePrivateKey());
    await mined(await ctx.walletClient.writeContract({ account: privateKeyToAccount(DEPLOYER_KEY), address: deployment.asset, abi: testUsdcAbi, functionName: 'mint', args: [wallet.address, payment.amount] }));
    const repayment = buildRepaymentAuthorization(deployment, { borrowerId, from: wallet.address, value: payment.amount - 100n });
    const repaySig = await wallet.signTypedData(receiveWithAuthorizationTypedData(deployment, repayment));
    await mined(await repayWithAuthorization(ctx, { borrowerId, authorization: repayment, signature: repaySig }));
    assert.equal(await debtOf(ctx, borrowerId), 100n);

    const pool0 = await assetBalanceOf(ctx, deployment.settlement);
    const half = await signedRefund(payment.paymentId, payment.amount / 2n);
    const first = await mined(await submitRefund(ctx, { batchId: batch.batchId, entries: batch.entries, paymentId: payment.paymentId, ...half }));
    assert.deepEqual(refundLogsIn(first.logs).map((e) => [e.amount, e.debtReduced]), [[payment.amount / 2n, 100n]]);
    assert.equal(await debtOf(ctx, borrowerId), 0n);

    const rest = await signedRefund(payment.paymentId, payment.amount - payment.amount / 2n);
    const second = await mined(await submitRefund(ctx, { batchId: batch.batchId, entries: batch.entries, paymentId: payment.paymentId, ...rest }));
    assert.deepEqual(refundLogsIn(second.logs).map((e) => [e.amount, e.debtReduced]), [[rest.authorization.value, 0n]]);
    assert.equal(await debtOf(ctx, borrowerId), 0n);
    // The whole refund stays in the pool.
    assert.equal(await assetBalanceOf(ctx, deployment.settlement), pool0 + payment.amount);
  });

  it('refunds the odd entry of a batch of 3, promoted without a sibling', async function () {
    const borrowerId = randomUUID();
    const batch = await settle(3, [borrowerId]);
    const payment = batch.items[2]!;
    assert.equal(entryProof(batch.entries, 2).proof.length, 1);
    const debt0 = await debtOf(ctx, borrowerId);
    const refund = await signedRefund(payment.paymentId, payment.amount);
    const receipt = await mined(await submitRefund(ctx, { batchId: batch.batchId, entries: batch.entries, paymentId: payment.paymentId, ...refund }));
    assert.deepEqual(refundLogsIn(receipt.logs).map((e) => [e.paymentId, e.amount]), [[payment.paymentId, payment.amount]]);
    assert.equal(await debtOf(ctx, borrowerId), debt0 - payment.amount);
    // The other two, each with a full proof, still refund.
    for (const i of [0, 1]) {
      const p = batch.items[i]!;
      await mined(await submitRefund(ctx, { batchId: batch.batchId, entries: batch.entries, paymentId: p.paymentId, ...(await signedRefund(p.paymentId, 1n)) }));
      assert.equal(await refundedOf(ctx, p.paymentId), 1n);
    }
  });
});
