import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, getAddress, http, type Hex } from 'viem';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { makeChainClients } from '../../src/chain/clients.js';
import { deployContracts, loadDeployment, saveDeployment, type Deployment } from '../../src/chain/deploy.js';
import type { Env } from '../../src/config/env.js';
import { rpcCall } from './probes.js';

/** anvil's first dev account (public knowledge; only ever used against our own anvil). */
export const ANVIL_DEV_PRIVATE_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
export const ANVIL_DEV_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' as const;
export const POOL_FUNDING = 1_000_000n * 10n ** 6n;

/**
 * Allows `key` to settle on our own anvil's contract (the owner is anvil's first dev account) and
 * funds its gas; a key already allowed is only funded. Returns its address.
 */
export async function allowSettlerOnDevChain(o: { rpcUrl: string; chainId: number; settlement: string }, key: Hex, gasWei = 10n ** 21n): Promise<`0x${string}`> {
  const address = privateKeyToAddress(key);
  const owner = makeChainClients({ rpcUrl: o.rpcUrl, chainId: o.chainId, privateKey: ANVIL_DEV_PRIVATE_KEY });
  const settlement = getAddress(o.settlement);
  await rpcCall(o.rpcUrl, 'anvil_setBalance', [address, `0x${gasWei.toString(16)}`]);
  if (await owner.publicClient.readContract({ address: settlement, abi: creditSettlementAbi, functionName: 'isSettler', args: [address] })) return address;
  const hash = await owner.walletClient!.writeContract({ address: settlement, abi: creditSettlementAbi, functionName: 'setSettler', args: [address, true] });
  const receipt = await owner.publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
  if (receipt.status !== 'success') throw new Error(`setSettler for ${address} reverted (${hash})`);
  return address;
}

export interface ChainSetup {
  settlement: `0x${string}`;
  asset: `0x${string}`;
  deployBlock: string;
  settlerPrivateKey: Hex;
  settlerAddress: `0x${string}`;
  /** Set when the contracts come from deployment.json (reused or just deployed), not from the environment. */
  deployment?: Deployment;
  deployed: boolean;
}

async function hasCode(rpcUrl: string, address: `0x${string}`): Promise<boolean> {
  const code = await createPublicClient({ transport: http(rpcUrl) }).getCode({ address });
  return code !== undefined && code !== '0x';
}

async function reusable(file: string, rpcUrl: string, chainId: number, settler: string, log: (m: string) => void): Promise<Deployment | undefined> {
  if (!existsSync(file)) return undefined;
  let d: Deployment;
  try {
    d = loadDeployment(file);
  } catch (err) {
    log(`ignoring ${file}: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
  if (d.chainId !== chainId || getAddress(d.settler) !== getAddress(settler)) return undefined;
  return (await hasCode(rpcUrl, d.settlement)) ? d : undefined;
}

/** Contracts from the environment, else the deployment in DATA_DIR if the chain still has it, else a fresh deployment. */
export async function ensureDeployment(opts: {
  env: Env;
  rpcUrl: string;
  ownsAnvil: boolean;
  dataDir: string;
  log: (m: string) => void;
}): Promise<ChainSetup> {
  const { env, rpcUrl, ownsAnvil, log } = opts;
  const key = (env.SETTLER_PRIVATE_KEY ?? (ownsAnvil ? ANVIL_DEV_PRIVATE_KEY : undefined)) as Hex | undefined;
  if (!key) throw new Error('RPC_URL points at an external chain: set SETTLER_PRIVATE_KEY (and SETTLEMENT_CONTRACT_ADDRESS, ASSET_ADDRESS)');
  const settlerAddress = privateKeyToAccount(key).address;
  const base = { settlerPrivateKey: key, settlerAddress };

  if (env.SETTLEMENT_CONTRACT_ADDRESS) {
    if (!env.ASSET_ADDRESS) throw new Error('SETTLEMENT_CONTRACT_ADDRESS is set: set ASSET_ADDRESS too');
    return { ...base, settlement: getAddress(env.SETTLEMENT_CONTRACT_ADDRESS), asset: getAddress(env.ASSET_ADDRESS), deployBlock: env.DEPLOY_BLOCK, deployed: false };
  }

  const file = join(opts.dataDir, 'deployment.json');
  const existing = await reusable(file, rpcUrl, env.CHAIN_ID, settlerAddress, log);
  if (existing) return { ...base, settlement: existing.settlement, asset: existing.asset, deployBlock: existing.deployBlock, deployment: existing, deployed: false };

  if (ownsAnvil && BigInt(await rpcCall<string>(rpcUrl, 'eth_getBalance', [settlerAddress, 'latest'])) === 0n) {
    await rpcCall(rpcUrl, 'anvil_setBalance', [settlerAddress, '0x' + (10n ** 21n).toString(16)]);
  }
  log('deploying the settlement contract and test USDC');
  const deployment = await deployContracts({
    rpcUrl,
    chainId: env.CHAIN_ID,
    deployerPrivateKey: ownsAnvil ? ANVIL_DEV_PRIVATE_KEY : key,
    settlerAddress,
    poolFunding: POOL_FUNDING,
  });
  saveDeployment(file, deployment);
  log(`deployed CreditSettlement at ${deployment.settlement} (asset ${deployment.asset}, block ${deployment.deployBlock})`);
  return { ...base, settlement: deployment.settlement, asset: deployment.asset, deployBlock: deployment.deployBlock, deployment, deployed: true };
}
