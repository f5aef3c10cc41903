import { BaseError, ContractFunctionRevertedError, decodeErrorResult, type Abi } from 'viem';
import { creditSettlementAbi, testUsdcAbi } from './abi.js';

// Both contracts' errors, so a revert bubbling up from the asset (e.g. a used authorization) gets its name.
const knownErrors: Abi = [...creditSettlementAbi, ...testUsdcAbi].filter((item) => item.type === 'error');

export interface ContractRevert {
  /** The contract's error, when either contract declares it. */
  errorName: string | undefined;
  message: string;
}

/** The contract refused a call in simulation or gas estimation; each call site has its own subclass. */
export class ContractRevertedError extends Error {
  override name = 'ContractRevertedError';

  constructor(
    readonly errorName: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export type ContractRevertedErrorClass = new (errorName: string | undefined, message: string) => ContractRevertedError;

/** The contract revert inside a viem error, or null when the failure was not a revert (network, node, nonce...). */
export function contractRevert(err: unknown): ContractRevert | null {
  if (!(err instanceof BaseError)) return null;
  const revert = err.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(revert instanceof ContractFunctionRevertedError)) return null;
  let errorName = revert.data?.errorName;
  if (errorName === undefined && revert.raw !== undefined) {
    try {
      errorName = decodeErrorResult({ abi: knownErrors, data: revert.raw }).errorName;
    } catch {
      // an error neither contract declares
    }
  }
  return { errorName, message: errorName ?? revert.shortMessage };
}
