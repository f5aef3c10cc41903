import {
  encodeFunctionData,
  type EncodeFunctionDataParameters,
  type EstimateContractGasParameters,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  type Hash,
  type SimulateContractParameters,
} from 'viem';
import { creditSettlementAbi } from './abi.js';
import type { ChainContext } from './context.js';
import { contractRevert, type ContractRevertedErrorClass } from './errors.js';
import type { TxRequest } from './nonce-manager.js';
import { SpanKind } from '@opentelemetry/api';
import { whenTraced } from '../observability/tracing.js';

type SettlementAbi = typeof creditSettlementAbi;
type Mutability = 'nonpayable' | 'payable';
type SettlementFunction = ContractFunctionName<SettlementAbi, Mutability>;
type ArgsOf<F extends SettlementFunction> = ContractFunctionArgs<SettlementAbi, Mutability, F>;
type ResultOf<F extends SettlementFunction> = ContractFunctionReturnType<SettlementAbi, Mutability, F, ArgsOf<F>>;

export interface SettlementCall<F extends SettlementFunction> {
  functionName: F;
  args: ArgsOf<F>;
  /** A contract revert in simulation or gas estimation throws this; node and network errors propagate as they are. */
  revertsAs: ContractRevertedErrorClass;
  /** Names the call in the revert's message; the function name by default. */
  describedAs?: string;
  /** The gas limit sent, from the node's estimate; 20 % over it by default. */
  gasLimit?: (estimate: bigint) => bigint;
}

/** Sends with the settler key, through its nonce manager when the context has one. */
export function sendWithSettler(ctx: Pick<ChainContext, 'nonces' | 'walletClient' | 'account'>, request: TxRequest): Promise<Hash> {
  if (ctx.nonces) return ctx.nonces.send(request);
  return ctx.walletClient.sendTransaction({ account: ctx.account, chain: ctx.walletClient.chain, ...request });
}

/**
 * Simulates a call to the settlement contract as the settler, estimates its gas and sends it with the
 * settler key (sendWithSettler: the nonce manager replaces it if it gets stuck); returns the hash once
 * broadcast. With `sendIf`, the simulated result decides first: false sends nothing and returns null.
 */
export async function sendSettlementCall<F extends SettlementFunction>(
  ctx: ChainContext,
  call: SettlementCall<F> & { sendIf: (simulated: ResultOf<F>) => boolean },
): Promise<Hash | null>;
export async function sendSettlementCall<F extends SettlementFunction>(ctx: ChainContext, call: SettlementCall<F>): Promise<Hash>;
export async function sendSettlementCall<F extends SettlementFunction>(
  ctx: ChainContext,
  call: SettlementCall<F> & { sendIf?: (simulated: ResultOf<F>) => boolean },
): Promise<Hash | null> {
  const attributes = { 'chain.id': ctx.deployment.chainId, 'chain.contract': ctx.deployment.settlement, 'chain.function': call.functionName };
  return whenTraced(`chain ${call.functionName}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const hash = await send(ctx, call);
    if (hash) span?.setAttribute('chain.tx.hash', hash);
    else span?.setAttribute('chain.sent', false); // the simulation said another transaction settled it
    return hash;
  });
}

async function send<F extends SettlementFunction>(ctx: ChainContext, call: SettlementCall<F> & { sendIf?: (simulated: ResultOf<F>) => boolean }): Promise<Hash | null> {
  // viem cannot check a call whose function name is still a type parameter: the overloads above keep callers typed.
  const contractCall = {
    account: ctx.account,
    address: ctx.deployment.settlement,
    abi: creditSettlementAbi,
    functionName: call.functionName as SettlementFunction,
    args: call.args,
  } as EstimateContractGasParameters;
  try {
    const { result } = await ctx.publicClient.simulateContract(contractCall as SimulateContractParameters);
    if (call.sendIf && !call.sendIf(result as ResultOf<F>)) return null;
    const estimate = await ctx.publicClient.estimateContractGas(contractCall);
    const data = encodeFunctionData({ abi: creditSettlementAbi, functionName: call.functionName, args: call.args } as EncodeFunctionDataParameters);
    const gas = call.gasLimit ? call.gasLimit(estimate) : estimate + estimate / 5n;
    return await sendWithSettler(ctx, { to: ctx.deployment.settlement, data, gas });
  } catch (err) {
    const revert = contractRevert(err);
    if (revert) throw new call.revertsAs(revert.errorName, `${call.describedAs ?? call.functionName} reverted: ${revert.message}`);
    throw err;
  }
}
