import { createPublicClient, getAddress, http, parseAbi } from 'viem';
import { networkId, type Env } from '../config/env.js';
import type { SettlementInfo } from '../domain/settlement-info.js';

const erc20 = parseAbi(['function decimals() view returns (uint8)', 'function name() view returns (string)', 'function version() view returns (string)']);

/** Reads the asset's metadata from the chain once at start-up. */
export async function loadSettlementInfo(env: Env): Promise<SettlementInfo> {
  if (!env.RPC_URL || !env.ASSET_ADDRESS || !env.SETTLEMENT_CONTRACT_ADDRESS || !env.SETTLER_ADDRESS) {
    throw new Error('RPC_URL, ASSET_ADDRESS, SETTLEMENT_CONTRACT_ADDRESS and SETTLER_ADDRESS must be set (npm start sets them)');
  }
  const client = createPublicClient({ transport: http(env.RPC_URL, { retryCount: 3, timeout: 10_000 }) });
  const asset = getAddress(env.ASSET_ADDRESS);
  const [decimals, name, version] = await Promise.all([
    client.readContract({ address: asset, abi: erc20, functionName: 'decimals' }),
    client.readContract({ address: asset, abi: erc20, functionName: 'name' }),
    client.readContract({ address: asset, abi: erc20, functionName: 'version' }).catch(() => '2'),
  ]);
  return {
    network: networkId(env),
    asset: asset.toLowerCase(),
    assetDecimals: decimals,
    assetName: name,
    assetVersion: version,
    settlementContract: getAddress(env.SETTLEMENT_CONTRACT_ADDRESS).toLowerCase(),
    settler: getAddress(env.SETTLER_ADDRESS),
  };
}
