import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { getAddress, type Hash } from 'viem';
import { creditSettlementAbi, testUsdcAbi } from './abi.js';
import { creationBytecode } from './artifacts.js';
import { makeChainClients, type ChainPublicClient } from './clients.js';

export interface Deployment {
  chainId: number;
  settlement: `0x${string}`;
  asset: `0x${string}`;
  assetDecimals: number;
  assetName: string;
  assetVersion: string;
  settler: `0x${string}`;
  deployBlock: string;
}

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an address') as unknown as z.ZodType<`0x${string}`>;

export const DeploymentSchema = z.object({
  chainId: z.number().int().positive(),
  settlement: address,
  asset: address,
  assetDecimals: z.number().int().min(0).max(255),
  assetName: z.string().min(1),
  assetVersion: z.string().min(1),
  settler: address,
  deployBlock: z.string().regex(/^\d+$/, 'a decimal block number'),
});

/**
 * Deploys TestUSDC and CreditSettlement(asset), allows settlerAddress to settle, and mints poolFunding
 * (base units) to the settlement contract. Each step waits for its receipt.
 */
export async function deployContracts(opts: {
  rpcUrl: string;
  chainId: number;
  deployerPrivateKey: `0x${string}`;
  settlerAddress: `0x${string}`;
  poolFunding: bigint;
}): Promise<Deployment> {
  const { publicClient, walletClient, account } = makeChainClients({
    rpcUrl: opts.rpcUrl,
    chainId: opts.chainId,
    privateKey: opts.deployerPrivateKey,
  });
  if (!walletClient || !account) throw new Error('deployer key is required');
  const nodeChainId = await publicClient.getChainId();
  if (nodeChainId !== opts.chainId) throw new Error(`RPC serves chain ${nodeChainId}, expected ${opts.chainId}`);

  const usdcReceipt = await mined(
    publicClient,
    await walletClient.deployContract({ abi: testUsdcAbi, bytecode: creationBytecode('TestUSDC') }),
  );
  const asset = getAddress(usdcReceipt.contractAddress!);
  const settlementReceipt = await mined(
    publicClient,
    await walletClient.deployContract({ abi: creditSettlementAbi, bytecode: creationBytecode('CreditSettlement'), args: [asset] }),
  );
  const settlement = getAddress(settlementReceipt.contractAddress!);

  await mined(
    publicClient,
    await walletClient.writeContract({ address: settlement, abi: creditSettlementAbi, functionName: 'setSettler', args: [opts.settlerAddress, true] }),
  );
  if (opts.poolFunding > 0n) {
    await mined(
      publicClient,
      await walletClient.writeContract({ address: asset, abi: testUsdcAbi, functionName: 'mint', args: [settlement, opts.poolFunding] }),
    );
  }

  const [assetName, assetVersion, assetDecimals] = await Promise.all([
    publicClient.readContract({ address: asset, abi: testUsdcAbi, functionName: 'name' }),
    publicClient.readContract({ address: asset, abi: testUsdcAbi, functionName: 'version' }),
    publicClient.readContract({ address: asset, abi: testUsdcAbi, functionName: 'decimals' }),
  ]);
  return {
    chainId: opts.chainId,
    settlement,
    asset,
    assetDecimals,
    assetName,
    assetVersion,
    settler: getAddress(opts.settlerAddress),
    deployBlock: settlementReceipt.blockNumber.toString(),
  };
}

async function mined(publicClient: ChainPublicClient, hash: Hash) {
  const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 120_000 });
  if (receipt.status !== 'success') throw new Error(`deployment transaction ${hash} reverted`);
  return receipt;
}

export function loadDeployment(path: string): Deployment {
  const parsed = DeploymentSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    throw new Error(`invalid deployment file ${path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/** Validates, then writes atomically (temp file + rename) so a crash never leaves half a file. */
export function saveDeployment(path: string, deployment: Deployment): void {
  const valid = DeploymentSchema.parse(deployment);
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(valid, null, 2) + '\n');
  renameSync(tmp, path);
}
