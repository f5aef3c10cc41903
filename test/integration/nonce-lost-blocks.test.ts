import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeFunctionData, getAbiItem, type Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { NonceManager } from '../../src/chain/nonce-manager.js';
import type { ChainContext } from '../../src/chain/context.js';
import { awaitBatchConfirmation, buildSettleBatchArgs, submitSettleBatch, type SettlementItem } from '../../src/chain/settlement.js';
import { bytes32ToUuid } from '@credit-facilitator/wire/ids';
import { startOwnAnvil, type OwnAnvil } from '../helpers/anvil.js';

const merchant = { id: randomUUID(), payTo: privateKeyToAccount(generatePrivateKey()).address };
const batchOf = (n: number, amount = 10n): SettlementItem[] =>
  Array.from({ length: n }, () => ({ paymentId: randomUUID(), borrowerId: randomUUID(), merchantId: merchant.id, payTo: merchant.payTo, amount }));

/**
 * A node that loses its last blocks and its mempool (as anvil does when SIGKILLed between two
 * writes of its state file; here evm_revert drops the blocks and anvil_dropAllTransactions the
 * mempool): the nonce manager hands it the same signed transactions again within seconds, and
 * nothing is paid twice.
 */
describe('chain: the nonce manager puts back what the node lost (real anvil)', function () {
  this.timeout(120_000);
  let anvil: OwnAnvil;
  let nonces: NonceManager;
  let ctx: ChainContext;
  const resent: Hash[] = [];
  const errors: unknown[] = [];

  before(async function () {
    anvil = await startOwnAnvil({ poolFunding: 10n ** 12n });
    nonces = new NonceManager(anvil.settler.publicClient, anvil.settler.walletClient, {
      checkEveryMs: 200,
      askAfterMs: 500,
      onResent: (e) => resent.push(...e.hashes),
      onError: (err) => errors.push(err),
    });
    ctx = { ...anvil.ctx, nonces };
    nonces.start();
  });

  after(async function () {
    nonces?.stop();
    await anvil?.stop();
  });

  const rpc = <T>(method: string, params: unknown[] = []) => (anvil.test.request as (a: { method: string; params: unknown[] }) => Promise<T>)({ method, params });
  const snapshot = () => rpc<string>('evm_snapshot');
  const revert = async (id: string) => assert.equal(await rpc<boolean>('evm_revert', [id]), true);
  const receiptOf = (hash: Hash) => anvil.ctx.publicClient.getTransactionReceipt({ hash }).catch(() => null);
  const minedReceipt = (hash: Hash) => anvil.ctx.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10_000 });

  async function within<T>(ms: number, what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await probe();
      if (v) return v;
      assert.ok(Date.now() < deadline, `${what} within ${ms} ms`);
      await sleep(50);
    }
  }

  /** Every PaymentSettled the chain holds, counted by payment id. */
  async function settledCounts(): Promise<Map<string, number>> {
    const logs = await anvil.ctx.publicClient.getLogs({
      address: anvil.deployment.settlement,
      event: getAbiItem({ abi: creditSettlementAbi, name: 'PaymentSettled' }),
      fromBlock: 0n,
      toBlock: 'latest',
    });
    const counts = new Map<string, number>();
    for (const l of logs) {
      const id = bytes32ToUuid(l.args.paymentId!);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  it('mined settleBatch transactions whose blocks were lost, and the mempool with them: mined again within seconds with the same hashes, each payment paid once', async function () {
    const snap = await snapshot();
    const batches = Array.from({ length: 4 }, () => ({ batchId: randomUUID(), items: batchOf(3) }));
    const hashes: Hash[] = [];
    for (const b of batches.slice(0, 3)) {
      const sent = await submitSettleBatch(ctx, b.batchId, b.items);
      assert.equal(sent.kind, 'sent');
      hashes.push((sent as { txHash: Hash }).txHash);
    }
    const before = await Promise.all(hashes.map(async (h) => (await minedReceipt(h)).blockNumber));
    // The fourth waits in the mempool when the node loses everything.
    await anvil.test.setAutomine(false);
    const fourth = await submitSettleBatch(ctx, batches[3]!.batchId, batches[3]!.items);
    hashes.push((fourth as { txHash: Hash }).txHash);
    await revert(snap);
    await rpc('anvil_dropAllTransactions');
    await anvil.test.mine({ blocks: 2 }); // the lost blocks' numbers now hold other blocks
    await anvil.test.setAutomine(true);
    for (const h of hashes) assert.equal(await receiptOf(h), null, 'the node lost every one');

    const lostAt = Date.now();
    const receipts = await within(5_000, 'all four mined again', async () => {
      await anvil.test.mine({ blocks: 1 }); // automine mines what arrives; this mines what already queued
      const rs = await Promise.all(hashes.map(receiptOf));
      return rs.every((r) => r?.status === 'success') ? rs : null;
    });
    const took = Date.now() - lostAt;
    assert.ok(took < 5_000, `put back in ${took} ms`);
    assert.deepEqual(
      receipts.slice(0, 3).map((r, i) => r!.blockNumber > before[i]!),
      [true, true, true],
      'in later blocks than the lost ones',
    );
    assert.deepEqual(new Set(resent), new Set(hashes), 'the nonce manager handed back exactly those, under the same hashes');

    const counts = await settledCounts();
    for (const b of batches) for (const item of b.items) assert.equal(counts.get(item.paymentId), 1, `payment ${item.paymentId} paid once`);
    for (const b of batches) assert.equal((await submitSettleBatch(ctx, b.batchId, b.items)).kind, 'already_settled');
    await within(3_000, 'nothing in flight', async () => nonces.pending === 0);
  });

  it('the contract refuses a repeated batch id: the same batch sent again straight to the node (no simulation) pays nothing', async function () {
    const batchId = randomUUID();
    const items = batchOf(2);
    const first = await submitSettleBatch(ctx, batchId, items);
    assert.equal((await minedReceipt((first as { txHash: Hash }).txHash)).status, 'success');
    const again = await nonces.send({
      to: anvil.deployment.settlement,
      data: encodeFunctionData({ abi: creditSettlementAbi, functionName: 'settleBatch', args: buildSettleBatchArgs(batchId, items) }),
      gas: 500_000n,
    });
    const receipt = await anvil.ctx.publicClient.waitForTransactionReceipt({ hash: again });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.logs.length, 0, 'no PaymentSettled, no BatchSettled, no transfer');
    const counts = await settledCounts();
    for (const item of items) assert.equal(counts.get(item.paymentId), 1);
  });

  it('a confirmation under way when the receipt it saw vanishes follows the transaction into its new block', async function () {
    const snap = await snapshot();
    const batchId = randomUUID();
    const sent = await submitSettleBatch(ctx, batchId, batchOf(2));
    const hash = (sent as { txHash: Hash }).txHash;
    const firstBlock = (await minedReceipt(hash)).blockNumber;
    const states: string[] = [];
    const confirming = awaitBatchConfirmation(anvil.ctx, {
      batchId,
      txHash: hash,
      confirmations: 3,
      pollMs: 50,
      timeoutMs: 60_000,
      currentHash: (h) => nonces.currentHash(h),
      onProgress: (p) => void states.push(p.state),
    });
    await within(5_000, 'the receipt seen', async () => states.includes('mined'));
    await anvil.test.setAutomine(false);
    await revert(snap);
    await rpc('anvil_dropAllTransactions');
    await anvil.test.mine({ blocks: 3 });
    await within(5_000, 'the receipt seen gone', async () => states.at(-1) !== 'mined');
    await anvil.test.setAutomine(true);
    const back = await within(5_000, 'mined again', async () => {
      await anvil.test.mine({ blocks: 1 });
      return receiptOf(hash);
    });
    assert.ok(back.blockNumber > firstBlock, 'in another block');
    await anvil.test.mine({ blocks: 3 });
    const result = await confirming;
    assert.equal(result.status, 'confirmed');
    assert.equal((result as { txHash: Hash }).txHash, hash);
    assert.equal((result as { blockNumber: bigint }).blockNumber, back.blockNumber, 'the block it now is in');
  });

  it('a lost nonce another process sent (a restart in between) is filled with an empty transfer; what this one sent is mined again, no nonce taken twice', async function () {
    nonces.stop();
    const snap = await snapshot();
    const earlier = await submitSettleBatch(ctx, randomUUID(), batchOf(1)); // "the previous process"
    const first = (await anvil.ctx.publicClient.getTransaction({ hash: (earlier as { txHash: Hash }).txHash })).nonce;
    const filled: number[] = [];
    const restarted = new NonceManager(anvil.settler.publicClient, anvil.settler.walletClient, { fillAfterMs: 300, askAfterMs: 100, onResent: (e) => filled.push(...e.filled) });
    const rctx = { ...anvil.ctx, nonces: restarted };
    const mine = [await submitSettleBatch(rctx, randomUUID(), batchOf(1)), await submitSettleBatch(rctx, randomUUID(), batchOf(1))].map((s) => (s as { txHash: Hash }).txHash);
    await restarted.check();
    await revert(snap);
    await rpc('anvil_dropAllTransactions');
    const receipts = await within(10_000, 'the hole filled and both mined again', async () => {
      await restarted.check();
      const rs = await Promise.all(mine.map(receiptOf));
      return rs.every((r) => r?.status === 'success') ? rs : null;
    });
    assert.deepEqual(filled, [first]);
    const nonceOf = async (h: Hash) => (await anvil.ctx.publicClient.getTransaction({ hash: h })).nonce;
    assert.deepEqual(await Promise.all(mine.map(nonceOf)), [first + 1, first + 2], 'the same nonces as first sent');
    assert.equal(await anvil.ctx.publicClient.getTransactionCount({ address: restarted.address, blockTag: 'latest' }), first + 3);
    let filler;
    for (let n = receipts[0]!.blockNumber; n > 0n && !filler; n--) {
      const block = await anvil.ctx.publicClient.getBlock({ blockNumber: n, includeTransactions: true });
      filler = block.transactions.find((t) => t.from.toLowerCase() === restarted.address.toLowerCase() && t.nonce === first);
    }
    assert.ok(filler, 'the hole is mined');
    assert.equal(filler.input, '0x', 'an empty transfer');
    assert.equal(filler.value, 0n);
    assert.equal(filler.to?.toLowerCase(), restarted.address.toLowerCase());
    nonces = restarted;
    ctx = rctx;
  });

  it('reported nothing it should not have (only the filled hole)', function () {
    const unexpected = errors.filter((e) => !/filled with empty transactions/.test(String((e as Error).message)));
    assert.deepEqual(unexpected.map(String), []);
  });
});
