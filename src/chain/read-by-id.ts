import type { ContractFunctionReturnType } from 'viem';
import { creditSettlementAbi } from './abi.js';
import type { ChainReadContext } from './context.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';

/** The settlement contract's views of one id (a UUID as bytes32). */
type ViewById = 'batchSettled' | 'batchRoot' | 'debtOf' | 'refundedOf';
type ViewResult<F extends ViewById> = ContractFunctionReturnType<typeof creditSettlementAbi, 'view', F>;

/** Whether a batch settled and its root, a borrower's debt, a payment's refunds: one of the settlement contract's views of an id. */
export function readById<F extends ViewById>(ctx: ChainReadContext, functionName: F, id: string): Promise<ViewResult<F>> {
  const read = ctx.publicClient.readContract({
    address: ctx.deployment.settlement,
    abi: creditSettlementAbi,
    functionName: functionName as ViewById,
    args: [uuidToBytes32(id)],
  });
  // viem types the read for the union of names; F picks the one asked for.
  return read as Promise<ViewResult<F>>;
}
