import { privateKeyToAddress } from 'viem/accounts';
import { deployContracts } from '../../src/chain/deploy.js';
import { UsageError } from './output.js';

/**
 * Deploys the test USDC and the settlement contract to any EVM node (anvil under Docker, a
 * testnet) and prints the settings the API and worker need. Needs no store.
 */
export async function chainDeploy(opts: { rpcUrl?: string; chainId?: string; deployerKey?: string; settler?: string; pool?: string }) {
  const rpcUrl = opts.rpcUrl ?? process.env.RPC_URL;
  const deployerKey = opts.deployerKey ?? process.env.DEPLOYER_PRIVATE_KEY ?? process.env.SETTLER_PRIVATE_KEY;
  if (!rpcUrl) throw new UsageError('--rpc-url (or RPC_URL) is required, e.g. http://127.0.0.1:8545');
  if (!deployerKey || !/^0x[0-9a-fA-F]{64}$/.test(deployerKey)) {
    throw new UsageError('--deployer-key (or DEPLOYER_PRIVATE_KEY) must be a 0x-prefixed 32-byte hex private key; it is used for this deploy only and never stored');
  }
  const chainId = Number(opts.chainId ?? process.env.CHAIN_ID ?? '84532');
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new UsageError('--chain-id must be a positive integer');
  const settler = (opts.settler ?? privateKeyToAddress(deployerKey as `0x${string}`)) as `0x${string}`;
  if (!/^0x[0-9a-fA-F]{40}$/.test(settler)) throw new UsageError('--settler must be a 0x address (the worker signs settleBatch with its key)');
  const pool = BigInt(opts.pool ?? '1000000000000');
  process.stderr.write(`deploying TestUSDC and CreditSettlement to ${rpcUrl} (chain ${chainId}); each step waits for its receipt...\n`);
  const d = await deployContracts({ rpcUrl, chainId, deployerPrivateKey: deployerKey as `0x${string}`, settlerAddress: settler, poolFunding: pool });
  return {
    CHAIN_ID: String(d.chainId),
    SETTLEMENT_CONTRACT_ADDRESS: d.settlement,
    ASSET_ADDRESS: d.asset,
    SETTLER_ADDRESS: d.settler,
    DEPLOY_BLOCK: d.deployBlock,
  };
}
