import { creditSettlementAbi } from './abi.js';
import type { ChainContext } from './context.js';

/** Whether the settlement contract allows this worker's key to settle (`isSettler`). */
export async function isAllowedSettler(chain: Pick<ChainContext, 'publicClient' | 'deployment'>): Promise<boolean> {
  return chain.publicClient.readContract({
    address: chain.deployment.settlement,
    abi: creditSettlementAbi,
    functionName: 'isSettler',
    args: [chain.deployment.settler],
  });
}
