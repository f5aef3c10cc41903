import { randomBytes, randomUUID } from 'node:crypto';
import { parseSignature, type Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { testUsdcAbi } from '../src/chain/abi.js';
import { makeChainClients } from '../src/chain/clients.js';
import { deployContracts, type Deployment } from '../src/chain/deploy.js';
import { transferWithAuthorizationTypedData } from '../src/chain/eip3009.js';
import type { ChainContext } from '../src/chain/context.js';
import { submitSettleBatch, type SettlementItem } from '../src/chain/settlement.js';
import { mean } from './stats.js';

/** anvil's second dev account: deploys and settles the gas contracts, so the worker's nonces stay its own. */
const GAS_ACCOUNT_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const;

export interface GasRow {
  label: string;
  batchSize: number;
  batches: number;
  gasPerPayment: number;
  gasPerBatch: number;
}

export interface GasReport {
  merchants: number;
  borrowers: number;
  cold: GasRow;
  warm: GasRow[];
  exactCold: number;
  exactWarm: number;
}

interface GasContext {
  chain: ChainContext;
  deployment: Deployment;
}

async function setup(rpcUrl: string, chainId: number): Promise<GasContext> {
  const account = privateKeyToAccount(GAS_ACCOUNT_KEY);
  const deployment = await deployContracts({ rpcUrl, chainId, deployerPrivateKey: GAS_ACCOUNT_KEY, settlerAddress: account.address, poolFunding: 10n ** 15n });
  const clients = makeChainClients({ rpcUrl, chainId, privateKey: GAS_ACCOUNT_KEY, pollingIntervalMs: 100 });
  if (!clients.walletClient || !clients.account) throw new Error('gas account has no wallet client');
  return { deployment, chain: { publicClient: clients.publicClient, walletClient: clients.walletClient, account: clients.account, deployment } };
}

async function gasOf(ctx: GasContext, hash: Hash): Promise<bigint> {
  const receipt = await ctx.chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  return receipt.gasUsed;
}

/** Payment i goes to merchant i mod M and is owed by borrower i mod B, as a real mixed batch would. */
function items(size: number, payTo: readonly `0x${string}`[], borrowers: readonly string[], offset: number): SettlementItem[] {
  return Array.from({ length: size }, (_, k) => {
    const i = offset + k;
    return {
      paymentId: randomUUID(),
      borrowerId: borrowers[i % borrowers.length] as string,
      merchantId: randomUUID(),
      payTo: payTo[i % payTo.length] as `0x${string}`,
      amount: 1000n + BigInt(i % 997),
    };
  });
}

async function settle(ctx: GasContext, batch: SettlementItem[]): Promise<number> {
  const sent = await submitSettleBatch(ctx.chain, randomUUID(), batch);
  if (sent.kind !== 'sent') throw new Error('a fresh batch id was reported as already settled');
  return Number(await gasOf(ctx, sent.txHash));
}

/**
 * settleBatch gas on a contract of its own, sent straight by a settler account (no API, no worker),
 * so every batch has exactly the size asked for. The first batch pays the cold costs (first payout
 * to each merchant, first debt of each borrower); the rest are the steady state.
 */
export async function measureSettleBatchGas(rpcUrl: string, chainId: number, opts: { merchants: number; borrowers: number; sizes: number[]; rounds: number }) {
  const ctx = await setup(rpcUrl, chainId);
  const payTo = Array.from({ length: opts.merchants }, () => privateKeyToAccount(generatePrivateKey()).address);
  const borrowers = Array.from({ length: opts.borrowers }, () => randomUUID());
  let offset = 0;
  const coldSize = Math.max(opts.borrowers, 100);
  const coldGas = await settle(ctx, items(coldSize, payTo, borrowers, offset));
  offset += coldSize;
  const cold: GasRow = { label: `cold: first batch (${coldSize})`, batchSize: coldSize, batches: 1, gasPerBatch: coldGas, gasPerPayment: coldGas / coldSize };
  const warm: GasRow[] = [];
  for (const size of opts.sizes) {
    const gas: number[] = [];
    for (let r = 0; r < opts.rounds; r++) {
      gas.push(await settle(ctx, items(size, payTo, borrowers, offset)));
      offset += size;
    }
    warm.push({ label: `batch ${size}`, batchSize: size, batches: opts.rounds, gasPerBatch: mean(gas), gasPerPayment: mean(gas) / size });
  }
  const exact = await measureExactBaseline(ctx, payTo, Math.min(opts.borrowers, 50));
  return { merchants: opts.merchants, borrowers: opts.borrowers, cold, warm, exactCold: exact.cold, exactWarm: exact.warm } satisfies GasReport;
}

/**
 * The x402 `exact` scheme on EVM settles each payment alone: the facilitator sends one EIP-3009
 * transferWithAuthorization (v, r, s form, as for an EOA payer) per payment. Same anvil, same token code.
 */
async function measureExactBaseline(ctx: GasContext, payTo: readonly `0x${string}`[], payerCount: number): Promise<{ cold: number; warm: number }> {
  const { walletClient } = ctx.chain;
  const d = ctx.deployment;
  const payers = Array.from({ length: payerCount }, () => privateKeyToAccount(generatePrivateKey()));
  for (const p of payers) {
    const hash = await walletClient.writeContract({ address: d.asset, abi: testUsdcAbi, functionName: 'mint', args: [p.address, 10n ** 12n] });
    await gasOf(ctx, hash);
  }
  const now = BigInt(Math.floor(Date.now() / 1000));
  const pay = async (i: number, to: `0x${string}`) => {
    const from = payers[i % payers.length] as (typeof payers)[number];
    const message = { from: from.address, to, value: 1000n + BigInt(i), validAfter: 0n, validBefore: now + 3600n, nonce: `0x${randomBytes(32).toString('hex')}` as const };
    const sig = parseSignature(await from.signTypedData(transferWithAuthorizationTypedData(d, message)));
    const hash = await walletClient.writeContract({
      address: d.asset,
      abi: testUsdcAbi,
      functionName: 'transferWithAuthorization',
      args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, Number(sig.v ?? BigInt(sig.yParity + 27)), sig.r, sig.s],
    });
    return Number(await gasOf(ctx, hash));
  };
  // Cold: a merchant's first receipt of the token (its balance slot goes from zero).
  const fresh = Array.from({ length: 10 }, () => privateKeyToAccount(generatePrivateKey()).address);
  const cold: number[] = [];
  for (let i = 0; i < fresh.length; i++) cold.push(await pay(i, fresh[i] as `0x${string}`));
  const warm: number[] = [];
  for (let i = 0; i < 50; i++) warm.push(await pay(i, payTo[i % payTo.length] as `0x${string}`));
  return { cold: mean(cold), warm: mean(warm) };
}
