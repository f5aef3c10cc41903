import { getAbiItem, parseEventLogs } from 'viem';
import { creditSettlementAbi } from '../src/chain/abi.js';
import type { World } from '../tools/harness/world.js';

export interface ProductBatches {
  batches: number;
  payments: number;
  sizes: number[];
  gasPerPayment: number;
}

/** The batches the running product settled in blocks `fromBlock`..`toBlock`: their sizes and gas, read back from the chain. */
export async function productBatches(w: World, fromBlock: bigint, toBlock: bigint | 'latest' = 'latest'): Promise<ProductBatches> {
  if (toBlock !== 'latest' && toBlock < fromBlock) return { batches: 0, payments: 0, sizes: [], gasPerPayment: Number.NaN }; // no block in the window
  const logs = await w.publicClient.getLogs({ address: w.settlement, event: getAbiItem({ abi: creditSettlementAbi, name: 'BatchSettled' }), fromBlock, toBlock });
  let gas = 0n;
  let payments = 0;
  const sizes: number[] = [];
  for (const log of logs) {
    const receipt = await w.publicClient.getTransactionReceipt({ hash: log.transactionHash });
    const settled = parseEventLogs({ abi: creditSettlementAbi, eventName: 'PaymentSettled', logs: receipt.logs }).length;
    gas += receipt.gasUsed;
    payments += settled;
    sizes.push(settled);
  }
  return { batches: logs.length, payments, sizes, gasPerPayment: payments === 0 ? Number.NaN : Number(gas) / payments };
}
