import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  encodeFunctionData,
  parseEventLogs,
  parseSignature,
  type Hash,
  type Hex,
  type TestClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { projectRoot } from '../../src/config/paths.js';
import { creditSettlementAbi, testUsdcAbi } from '../../src/chain/abi.js';
import { makeChainClients } from '../../src/chain/clients.js';
import { checkGenerated } from '../../src/chain/compile.js';
import { deployContracts, loadDeployment, saveDeployment, type Deployment } from '../../src/chain/deploy.js';
import {
  RepaymentRevertedError,
  buildRepaymentAuthorization,
  eip3009Domain,
  receiveWithAuthorizationTypedData,
  repayWithAuthorization,
  transferWithAuthorizationTypedData,
} from '../../src/chain/eip3009.js';
import type { ChainContext } from '../../src/chain/context.js';
import { contractRevert } from '../../src/chain/errors.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import {
  SettlementRevertedError,
  assetBalanceOf,
  awaitBatchConfirmation,
  buildSettleBatchArgs,
  debtOf,
  findBatchSettlement,
  isBatchSettled,
  readPaymentSettledEvents,
  submitSettleBatch,
  type ConfirmationProgress,
  type SettlementItem,
} from '../../src/chain/settlement.js';
import { CHAIN_ID, DEPLOYER_KEY, startOwnAnvil, type OwnAnvil } from '../helpers/anvil.js';
import { freePort } from '../../tools/stack/processes.js';

const POOL = 10n ** 12n;

function randomAddress(): `0x${string}` {
  return privateKeyToAccount(generatePrivateKey()).address;
}

function items(n: number, merchants: readonly { id: string; payTo: `0x${string}` }[], borrowers: readonly string[]): SettlementItem[] {
  return Array.from({ length: n }, (_, i) => {
    const m = merchants[i % merchants.length]!;
    return { paymentId: randomUUID(), borrowerId: borrowers[i % borrowers.length]!, merchantId: m.id, payTo: m.payTo, amount: BigInt(1_000 + i) };
  });
}

function sum(list: readonly SettlementItem[], pick: (i: SettlementItem) => boolean = () => true): bigint {
  return list.filter(pick).reduce((s, i) => s + i.amount, 0n);
}

describe('chain: contracts on anvil', function () {
  this.timeout(120_000);
  let anvil: OwnAnvil;
  let rpcUrl: string;
  let deployment: Deployment;
  let ctx: ChainContext;
  let test: TestClient;

  before(async function () {
    anvil = await startOwnAnvil({ poolFunding: POOL });
    ({ rpcUrl, deployment, ctx, test } = anvil);
  });

  after(async function () {
    await anvil?.stop();
  });

  async function mined(hash: Hash) {
    return ctx.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  }

  async function settle(batchId: string, list: SettlementItem[]) {
    const sent = await submitSettleBatch(ctx, batchId, list);
    assert.equal(sent.kind, 'sent');
    const result = await awaitBatchConfirmation(ctx, { batchId, txHash: (sent as { txHash: Hash }).txHash, confirmations: 1, pollMs: 50, timeoutMs: 20_000 });
    assert.equal(result.status, 'confirmed');
    return result as Extract<typeof result, { status: 'confirmed' }>;
  }

  it('compiled artifacts match the sources (compile --check), and an edited source is caught', function () {
    assert.deepEqual(checkGenerated(), []);
    const root = mkdtempSync(join(tmpdir(), 'chain-compile-'));
    try {
      cpSync(join(projectRoot(), 'contracts'), join(root, 'contracts'), { recursive: true });
      cpSync(join(projectRoot(), 'src/chain/abi.ts'), join(root, 'src/chain/abi.ts'));
      appendFileSync(join(root, 'contracts/TestUSDC.sol'), '// edited\n');
      assert.deepEqual(checkGenerated(root), ['contracts/build/TestUSDC.json']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('deploys the asset and the settlement contract, and the deployment file round-trips', async function () {
    assert.equal(deployment.chainId, CHAIN_ID);
    assert.equal(deployment.assetName, 'USD Coin');
    assert.equal(deployment.assetVersion, '2');
    assert.equal(deployment.assetDecimals, 6);
    const read = (functionName: 'asset' | 'owner') => ctx.publicClient.readContract({ address: deployment.settlement, abi: creditSettlementAbi, functionName });
    assert.equal(await read('asset'), deployment.asset);
    const isSettler = await ctx.publicClient.readContract({ address: deployment.settlement, abi: creditSettlementAbi, functionName: 'isSettler', args: [ctx.account.address] });
    assert.equal(isSettler, true);
    assert.equal(await assetBalanceOf(ctx, deployment.settlement), POOL);
    const symbol = await ctx.publicClient.readContract({ address: deployment.asset, abi: testUsdcAbi, functionName: 'symbol' });
    assert.equal(symbol, 'USDC');
    const dir = mkdtempSync(join(tmpdir(), 'chain-deployment-'));
    try {
      const path = join(dir, 'nested', 'deployment.json');
      saveDeployment(path, deployment);
      assert.deepEqual(loadDeployment(path), deployment);
      writeFileSync(path, JSON.stringify({ ...deployment, settlement: '0x1234' }));
      assert.throws(() => loadDeployment(path), /settlement/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('settleBatch', function () {
    const merchants = [
      { id: randomUUID(), payTo: randomAddress() },
      { id: randomUUID(), payTo: randomAddress() },
    ];
    const borrowers = [randomUUID(), randomUUID(), randomUUID()];
    const batchId = randomUUID();
    let batch: SettlementItem[];
    let settledTx: Hash;

    it('pays each payout address, books each borrower, and emits one event per payment', async function () {
      batch = items(7, merchants, borrowers);
      const confirmed = await settle(batchId, batch);
      settledTx = confirmed.txHash;
      for (const m of merchants) assert.equal(await assetBalanceOf(ctx, m.payTo), sum(batch, (i) => i.merchantId === m.id));
      for (const b of borrowers) assert.equal(await debtOf(ctx, b), sum(batch, (i) => i.borrowerId === b));
      assert.equal(await assetBalanceOf(ctx, deployment.settlement), POOL - sum(batch));

      const events = await readPaymentSettledEvents(ctx, settledTx);
      assert.deepEqual(
        events.map(({ paymentId, borrowerId, merchantId, amount }) => ({ paymentId, borrowerId, merchantId, amount })),
        batch.map(({ paymentId, borrowerId, merchantId, amount }) => ({ paymentId, borrowerId, merchantId, amount })),
      );
      const receipt = await ctx.publicClient.getTransactionReceipt({ hash: settledTx });
      const batchLogs = parseEventLogs({ abi: creditSettlementAbi, eventName: 'BatchSettled', logs: receipt.logs });
      assert.equal(batchLogs.length, 1);
      assert.deepEqual(batchLogs[0]!.args, { batchId: uuidToBytes32(batchId), paymentCount: 7n, total: sum(batch) });
      const found = await findBatchSettlement(ctx, batchId);
      assert.equal(found?.txHash, settledTx);
      assert.equal(await isBatchSettled(ctx, batchId), true);
    });

    it('treats the same batchId again as a no-op, and confirms it with the transaction that paid', async function () {
      assert.deepEqual(await submitSettleBatch(ctx, batchId, batch), { kind: 'already_settled' });
      const poolBefore = await assetBalanceOf(ctx, deployment.settlement);
      // Bypass the pre-check, as a retry racing the first submission would.
      const hash = await ctx.walletClient.writeContract({
        address: deployment.settlement,
        abi: creditSettlementAbi,
        functionName: 'settleBatch',
        args: buildSettleBatchArgs(batchId, batch),
        gas: 2_000_000n,
      });
      const receipt = await mined(hash);
      assert.equal(receipt.status, 'success');
      assert.equal(receipt.logs.length, 0);
      assert.equal(await assetBalanceOf(ctx, deployment.settlement), poolBefore);
      for (const b of borrowers) assert.equal(await debtOf(ctx, b), sum(batch, (i) => i.borrowerId === b));
      const result = await awaitBatchConfirmation(ctx, { batchId, txHash: hash, confirmations: 1, pollMs: 50, timeoutMs: 10_000 });
      assert.equal(result.status === 'confirmed' && result.txHash, settledTx);
    });

    it('reverts when entries, payouts and debits do not add up, and reports the mined revert', async function () {
      const id = randomUUID();
      const [bid, entries, payouts, debits] = buildSettleBatchArgs(id, items(3, merchants, borrowers));
      const bad = [bid, entries, [{ ...payouts[0]!, amount: payouts[0]!.amount + 1n }, ...payouts.slice(1)], debits] as const;
      await assert.rejects(
        ctx.publicClient.simulateContract({ account: ctx.account, address: deployment.settlement, abi: creditSettlementAbi, functionName: 'settleBatch', args: bad }),
        (err) => contractRevert(err)?.errorName === 'SumMismatch',
      );
      const max = 2n ** 256n - 1n;
      const overflow = [bid, [{ ...entries[0]!, amount: max }, { ...entries[1]!, amount: 1n }], [{ ...payouts[0]!, amount: 0n }], [{ ...debits[0]!, amount: 0n }]] as const;
      await assert.rejects(
        ctx.publicClient.simulateContract({ account: ctx.account, address: deployment.settlement, abi: creditSettlementAbi, functionName: 'settleBatch', args: overflow }),
        (err) => contractRevert(err)?.errorName === 'Panic',
      );
      const hash = await ctx.walletClient.writeContract({ address: deployment.settlement, abi: creditSettlementAbi, functionName: 'settleBatch', args: bad, gas: 1_000_000n });
      const result = await awaitBatchConfirmation(ctx, { batchId: id, txHash: hash, confirmations: 1, pollMs: 50, timeoutMs: 10_000 });
      assert.equal(result.status, 'reverted');
      assert.equal(await isBatchSettled(ctx, id), false);
    });

    it('refuses a caller that is not an allowed settler', async function () {
      const outsider = makeChainClients({ rpcUrl, chainId: CHAIN_ID, privateKey: generatePrivateKey() });
      await test.setBalance({ address: outsider.account!.address, value: 10n ** 20n });
      const outsiderCtx: ChainContext = { publicClient: outsider.publicClient, walletClient: outsider.walletClient!, account: outsider.account!, deployment };
      await assert.rejects(submitSettleBatch(outsiderCtx, randomUUID(), items(2, merchants, borrowers)), (err) => {
        return err instanceof SettlementRevertedError && err.errorName === 'NotSettler';
      });
    });

    it('redeems a signed ReceiveWithAuthorization as a repayment, exactly once', async function () {
      const borrowerWallet = privateKeyToAccount(generatePrivateKey());
      const [b0, b1] = [borrowers[0]!, borrowers[1]!];
      const mint = await ctx.walletClient.writeContract({
        account: privateKeyToAccount(DEPLOYER_KEY),
        address: deployment.asset,
        abi: testUsdcAbi,
        functionName: 'mint',
        args: [borrowerWallet.address, 1_000_000n],
      });
      await mined(mint);
      const debtBefore = await debtOf(ctx, b0);
      const poolBefore = await assetBalanceOf(ctx, deployment.settlement);
      const value = debtBefore / 2n;
      const authorization = buildRepaymentAuthorization(deployment, { borrowerId: b0, from: borrowerWallet.address, value });
      const signature = await borrowerWallet.signTypedData(receiveWithAuthorizationTypedData(deployment, authorization));

      // The nonce names b0: the same signature cannot pay down b1's debt.
      await assert.rejects(repayWithAuthorization(ctx, { borrowerId: b1, authorization, signature }), (err) => {
        return err instanceof RepaymentRevertedError && err.errorName === 'NonceNotBoundToBorrower';
      });
      const receipt = await mined(await repayWithAuthorization(ctx, { borrowerId: b0, authorization, signature }));
      assert.equal(receipt.status, 'success');
      assert.equal(await debtOf(ctx, b0), debtBefore - value);
      assert.equal(await assetBalanceOf(ctx, deployment.settlement), poolBefore + value);
      assert.equal(await assetBalanceOf(ctx, borrowerWallet.address), 1_000_000n - value);
      const repaid = parseEventLogs({ abi: creditSettlementAbi, eventName: 'Repaid', logs: receipt.logs });
      assert.deepEqual(repaid[0]?.args, { borrowerId: uuidToBytes32(b0), from: borrowerWallet.address, amount: value });

      await assert.rejects(repayWithAuthorization(ctx, { borrowerId: b0, authorization, signature }), (err) => {
        return err instanceof RepaymentRevertedError && err.errorName === 'AuthorizationUsedOrCanceled';
      });
      const tooMuch = buildRepaymentAuthorization(deployment, { borrowerId: b0, from: borrowerWallet.address, value: debtBefore });
      const tooMuchSig = await borrowerWallet.signTypedData(receiveWithAuthorizationTypedData(deployment, tooMuch));
      await assert.rejects(repayWithAuthorization(ctx, { borrowerId: b0, authorization: tooMuch, signature: tooMuchSig }), (err) => {
        return err instanceof RepaymentRevertedError && err.errorName === 'InvalidAmount';
      });
    });
  });

  describe('TestUSDC EIP-3009', function () {
    it('moves funds with a TransferWithAuthorization (v/r/s and bytes) and refuses malleable, expired and misdirected ones', async function () {
      const holder = privateKeyToAccount(generatePrivateKey());
      const payee = randomAddress();
      const owner = privateKeyToAccount(DEPLOYER_KEY);
      await mined(await ctx.walletClient.writeContract({ account: owner, address: deployment.asset, abi: testUsdcAbi, functionName: 'mint', args: [holder.address, 100n] }));
      const now = BigInt(Math.floor(Date.now() / 1000));
      const auth = (nonce: Hex, validBefore = now + 3600n) => ({ from: holder.address, to: payee, value: 10n, validAfter: 0n, validBefore, nonce });
      const send = async (functionName: 'transferWithAuthorization' | 'receiveWithAuthorization', a: ReturnType<typeof auth>, sig: Hex, split = true) => {
        const { r, s, yParity } = parseSignature(sig);
        const base = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;
        const args = split ? ([...base, 27 + yParity, r, s] as const) : ([...base, sig] as const);
        return ctx.publicClient.simulateContract({ account: ctx.account, address: deployment.asset, abi: testUsdcAbi, functionName, args } as never);
      };
      const a1 = auth(generatePrivateKey());
      const s1 = await holder.signTypedData(transferWithAuthorizationTypedData(deployment, a1));
      const { request } = await send('transferWithAuthorization', a1, s1);
      await mined(await ctx.walletClient.writeContract(request as never));
      assert.equal(await assetBalanceOf(ctx, payee), 10n);
      const used = await ctx.publicClient.readContract({ address: deployment.asset, abi: testUsdcAbi, functionName: 'authorizationState', args: [holder.address, a1.nonce] });
      assert.equal(used, true);
      await assert.rejects(send('transferWithAuthorization', a1, s1), (e) => contractRevert(e)?.errorName === 'AuthorizationUsedOrCanceled');

      const a2 = auth(generatePrivateKey());
      const s2 = await holder.signTypedData(transferWithAuthorizationTypedData(deployment, a2));
      const { request: r2 } = await send('transferWithAuthorization', a2, s2, false);
      await mined(await ctx.walletClient.writeContract(r2 as never));
      assert.equal(await assetBalanceOf(ctx, payee), 20n);

      // (r, n - s, flipped v) is the same signature's malleable twin.
      const a3 = auth(generatePrivateKey());
      const s3 = parseSignature(await holder.signTypedData(transferWithAuthorizationTypedData(deployment, a3)));
      const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
      const highS = `0x${(n - BigInt(s3.s)).toString(16).padStart(64, '0')}` as Hex;
      await assert.rejects(
        ctx.publicClient.simulateContract({
          account: ctx.account, address: deployment.asset, abi: testUsdcAbi, functionName: 'transferWithAuthorization',
          args: [a3.from, a3.to, a3.value, a3.validAfter, a3.validBefore, a3.nonce, 28 - s3.yParity, s3.r, highS],
        }),
        (e) => contractRevert(e)?.errorName === 'InvalidSignature',
      );
      const a4 = auth(generatePrivateKey(), now - 10n);
      await assert.rejects(send('transferWithAuthorization', a4, await holder.signTypedData(transferWithAuthorizationTypedData(deployment, a4))), (e) => contractRevert(e)?.errorName === 'AuthorizationExpired');
      // receiveWithAuthorization may only be redeemed by its payee.
      const a5 = auth(generatePrivateKey());
      await assert.rejects(send('receiveWithAuthorization', a5, await holder.signTypedData(receiveWithAuthorizationTypedData(deployment, a5))), (e) => contractRevert(e)?.errorName === 'CallerMustBePayee');
      // A cancelled nonce can no longer be used.
      const a6 = auth(generatePrivateKey());
      const cancel = parseSignature(await holder.signTypedData({
        domain: eip3009Domain(deployment),
        types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
        primaryType: 'CancelAuthorization',
        message: { authorizer: holder.address, nonce: a6.nonce },
      }));
      await mined(await ctx.walletClient.writeContract({ address: deployment.asset, abi: testUsdcAbi, functionName: 'cancelAuthorization', args: [holder.address, a6.nonce, 27 + cancel.yParity, cancel.r, cancel.s] }));
      await assert.rejects(send('transferWithAuthorization', a6, await holder.signTypedData(transferWithAuthorizationTypedData(deployment, a6))), (e) => contractRevert(e)?.errorName === 'AuthorizationUsedOrCanceled');
      // A signature by someone else is refused.
      await assert.rejects(send('transferWithAuthorization', a5, await privateKeyToAccount(generatePrivateKey()).signTypedData(transferWithAuthorizationTypedData(deployment, a5))), (e) => contractRevert(e)?.errorName === 'InvalidSignature');
    });
  });

  describe('awaitBatchConfirmation', function () {
    const merchants = [{ id: randomUUID(), payTo: randomAddress() }];
    const borrowers = [randomUUID()];

    it('waits for the configured confirmations', async function () {
      const batchId = randomUUID();
      const sent = await submitSettleBatch(ctx, batchId, items(2, merchants, borrowers));
      assert.equal(sent.kind, 'sent');
      const seen: ConfirmationProgress[] = [];
      let done = false;
      const waiting = awaitBatchConfirmation(ctx, {
        batchId, txHash: (sent as { txHash: Hash }).txHash, confirmations: 3, pollMs: 25, timeoutMs: 20_000,
        onProgress: (p) => void seen.push(p),
      }).finally(() => (done = true));
      while (!seen.some((p) => p.state === 'mined')) await sleep(20);
      await sleep(150);
      assert.equal(done, false);
      await test.mine({ blocks: 2 });
      const result = await waiting;
      assert.equal(result.status, 'confirmed');
      if (result.status !== 'confirmed') return;
      const block = await ctx.publicClient.getBlock({ blockNumber: result.blockNumber });
      assert.equal(result.blockHash, block.hash);
      assert.equal(result.confirmedAt, Number(block.timestamp));
      assert.ok(result.gasUsed > 0n);
    });

    it('follows a reorg that re-includes the transaction in another block', async function () {
      const batchId = randomUUID();
      const data = encodeFunctionData({ abi: creditSettlementAbi, functionName: 'settleBatch', args: buildSettleBatchArgs(batchId, items(2, merchants, borrowers)) });
      const request = await ctx.walletClient.prepareTransactionRequest({ to: deployment.settlement, data, gas: 1_000_000n });
      const raw = await ctx.walletClient.signTransaction(request);
      const hash = await ctx.publicClient.sendRawTransaction({ serializedTransaction: raw });
      const first = await mined(hash);
      const seen: ConfirmationProgress[] = [];
      const waiting = awaitBatchConfirmation(ctx, { batchId, txHash: hash, confirmations: 3, pollMs: 25, timeoutMs: 20_000, onProgress: (p) => void seen.push(p) });
      await test.mine({ blocks: 1 });
      while (!seen.some((p) => p.confirmations === 2)) await sleep(20);
      // Replace the last two blocks; the same signed transaction lands in the second new one.
      await test.request({ method: 'anvil_reorg', params: [2, [[raw, 1]]] } as never);
      await test.mine({ blocks: 2 });
      const result = await waiting;
      assert.equal(result.status, 'confirmed');
      if (result.status !== 'confirmed') return;
      assert.equal(result.txHash, hash);
      assert.equal(result.blockNumber, first.blockNumber + 1n);
      assert.notEqual(result.blockHash, first.blockHash);
    });

    it('reports dropped when a reorg removes the block, and the same batchId then settles once', async function () {
      const batchId = randomUUID();
      const list = items(3, merchants, borrowers);
      const balanceBefore = await assetBalanceOf(ctx, merchants[0]!.payTo);
      const snapshot = await test.snapshot();
      const sent = await submitSettleBatch(ctx, batchId, list);
      assert.equal(sent.kind, 'sent');
      const txHash = (sent as { txHash: Hash }).txHash;
      await mined(txHash);
      const seen: ConfirmationProgress[] = [];
      const waiting = awaitBatchConfirmation(ctx, { batchId, txHash, confirmations: 2, pollMs: 25, timeoutMs: 20_000, dropAfterMs: 300, onProgress: (p) => void seen.push(p) });
      while (!seen.some((p) => p.state === 'mined')) await sleep(20);
      await test.revert({ id: snapshot });
      assert.deepEqual(await waiting, { status: 'dropped' });
      assert.equal(await isBatchSettled(ctx, batchId), false);
      assert.equal(await assetBalanceOf(ctx, merchants[0]!.payTo), balanceBefore);
      await settle(batchId, list);
      assert.equal(await assetBalanceOf(ctx, merchants[0]!.payTo), balanceBefore + sum(list));
    });

    it('keeps waiting while the transaction is pending, and reports dropped when the pool forgets it', async function () {
      const batchId = randomUUID();
      const list = items(2, merchants, borrowers);
      await test.setAutomine(false);
      try {
        const sent = await submitSettleBatch(ctx, batchId, list);
        const txHash = (sent as { txHash: Hash }).txHash;
        const seen: ConfirmationProgress[] = [];
        const waiting = awaitBatchConfirmation(ctx, { batchId, txHash, confirmations: 1, pollMs: 25, timeoutMs: 20_000, dropAfterMs: 300, onProgress: (p) => void seen.push(p) });
        // Several polls while it waits in the pool (counted, not timed: a busy machine polls less often).
        const deadline = Date.now() + 15_000;
        while (seen.length <= 3 && Date.now() < deadline) await sleep(50);
        assert.ok(seen.length > 3 && seen.every((p) => p.state === 'pending'), `progress while pending: ${JSON.stringify(seen.slice(0, 5))}`);
        await test.dropTransaction({ hash: txHash });
        assert.deepEqual(await waiting, { status: 'dropped' });
      } finally {
        await test.setAutomine(true);
      }
      await settle(batchId, list);
    });

    it('throws on timeout so the caller can retry', async function () {
      await test.setAutomine(false);
      try {
        const batchId = randomUUID();
        const sent = await submitSettleBatch(ctx, batchId, items(1, merchants, borrowers));
        await assert.rejects(
          awaitBatchConfirmation(ctx, { batchId, txHash: (sent as { txHash: Hash }).txHash, confirmations: 1, pollMs: 25, timeoutMs: 200 }),
          { name: 'ConfirmationTimeoutError' },
        );
      } finally {
        await test.setAutomine(true);
        await test.mine({ blocks: 1 });
      }
    });

    it('throws (for a retry) when the node is unreachable', async function () {
      const down = makeChainClients({ rpcUrl: `http://127.0.0.1:${await freePort()}`, chainId: CHAIN_ID, retryCount: 0 });
      await assert.rejects(isBatchSettled({ publicClient: down.publicClient, deployment }, randomUUID()));
    });
  });

  describe('gas', function () {
    it('reports gas per payment for batches of 1, 10 and 100 (10 merchants, 50 borrowers)', async function () {
      const rows: string[] = [];
      let steady100 = 0;
      for (const n of [1, 10, 100]) {
        const merchants = Array.from({ length: Math.min(n, 10) }, () => ({ id: randomUUID(), payTo: randomAddress() }));
        const borrowers = Array.from({ length: Math.min(n, 50) }, () => randomUUID());
        // First batch writes fresh storage (new payees and borrowers); the second finds it non-zero.
        for (const phase of ['fresh', 'steady'] as const) {
          const confirmed = await settle(randomUUID(), items(n, merchants, borrowers));
          const perPayment = Number(confirmed.gasUsed) / n;
          if (n === 100 && phase === 'steady') steady100 = perPayment;
          rows.push(`${String(n).padStart(4)} payments, ${phase.padEnd(6)}: ${String(confirmed.gasUsed).padStart(8)} gas, ${perPayment.toFixed(0).padStart(6)} per payment`);
        }
      }
      console.log('      settleBatch gas (10 merchants / 50 borrowers at most):\n      ' + rows.join('\n      '));
      // The product's bar: at most 8,000 gas per payment at batch 100 once payees and borrowers have state.
      assert.ok(steady100 > 0 && steady100 <= 8_000, `batch of 100 costs ${steady100} gas per payment`);
    });
  });
});
