import { randomBytes } from 'node:crypto';
import { encodeFunctionData, parseSignature, type Hash, type Hex } from 'viem';
import { creditSettlementAbi } from './abi.js';
import type { Deployment } from './deploy.js';
import { contractRevert } from './errors.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { sendWithSettler, type ChainContext } from './settlement.js';

/** An EIP-3009 authorization message (TransferWithAuthorization and ReceiveWithAuthorization share the fields). */
export interface Eip3009Authorization {
  from: `0x${string}`;
  to: `0x${string}`;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: `0x${string}`;
}

const authorizationFields = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const;

/** The message from its decimal/hex string form (as the API takes it and the store keeps it). */
export function authorizationFromStrings(a: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string }): Eip3009Authorization {
  return {
    from: a.from as `0x${string}`,
    to: a.to as `0x${string}`,
    value: BigInt(a.value),
    validAfter: BigInt(a.validAfter),
    validBefore: BigInt(a.validBefore),
    nonce: a.nonce as `0x${string}`,
  };
}

export const receiveWithAuthorizationTypes = { ReceiveWithAuthorization: authorizationFields } as const;
export const transferWithAuthorizationTypes = { TransferWithAuthorization: authorizationFields } as const;

export function eip3009Domain(d: Deployment) {
  return { name: d.assetName, version: d.assetVersion, chainId: d.chainId, verifyingContract: d.asset } as const;
}

/** Typed data for viem's signTypedData (or eth_signTypedData_v4 after viem's serializeTypedData). */
export function receiveWithAuthorizationTypedData(d: Deployment, message: Eip3009Authorization) {
  return { domain: eip3009Domain(d), types: receiveWithAuthorizationTypes, primaryType: 'ReceiveWithAuthorization', message } as const;
}

export function transferWithAuthorizationTypedData(d: Deployment, message: Eip3009Authorization) {
  return { domain: eip3009Domain(d), types: transferWithAuthorizationTypes, primaryType: 'TransferWithAuthorization', message } as const;
}

/**
 * A repayment nonce: the borrower's 16 UUID bytes followed by 16 random bytes. The settlement contract
 * requires this binding, so a signed repayment can only ever reduce the named borrower's debt.
 */
export function repaymentNonce(borrowerId: string, random: Uint8Array = randomBytes(16)): `0x${string}` {
  if (random.length !== 16) throw new RangeError('repayment nonce needs 16 random bytes');
  return `0x${uuidToBytes32(borrowerId).slice(34)}${Buffer.from(random).toString('hex')}`;
}

/** The ReceiveWithAuthorization a borrower's wallet signs to repay `value` base units to the settlement contract. */
export function buildRepaymentAuthorization(
  d: Deployment,
  opts: { borrowerId: string; from: `0x${string}`; value: bigint; validForSeconds?: number; nowSeconds?: number; nonce?: `0x${string}` },
): Eip3009Authorization {
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  return {
    from: opts.from,
    to: d.settlement,
    value: opts.value,
    validAfter: 0n,
    validBefore: BigInt(now + (opts.validForSeconds ?? 3600)),
    nonce: opts.nonce ?? repaymentNonce(opts.borrowerId),
  };
}

export class RepaymentRevertedError extends Error {
  constructor(
    readonly errorName: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'RepaymentRevertedError';
  }
}

/** Redeems a signed repayment through the settlement contract; returns the transaction hash once broadcast. */
export async function repayWithAuthorization(
  ctx: ChainContext,
  args: { borrowerId: string; authorization: Eip3009Authorization; signature: Hex },
): Promise<Hash> {
  const a = args.authorization;
  if (a.to.toLowerCase() !== ctx.deployment.settlement.toLowerCase()) throw new RangeError('repayment must be authorized to the settlement contract');
  const sig = parseSignature(args.signature);
  const call = {
    account: ctx.account,
    address: ctx.deployment.settlement,
    abi: creditSettlementAbi,
    functionName: 'repayWithAuthorization',
    args: [uuidToBytes32(args.borrowerId), a.from, a.value, a.validAfter, a.validBefore, a.nonce, 27 + sig.yParity, sig.r, sig.s],
  } as const;
  try {
    await ctx.publicClient.simulateContract(call);
    const gas = await ctx.publicClient.estimateContractGas(call);
    const data = encodeFunctionData({ abi: creditSettlementAbi, functionName: 'repayWithAuthorization', args: call.args });
    return await sendWithSettler(ctx, { to: ctx.deployment.settlement, data, gas: gas + gas / 5n });
  } catch (err) {
    const revert = contractRevert(err);
    if (revert) throw new RepaymentRevertedError(revert.errorName, `repayWithAuthorization reverted: ${revert.message}`);
    throw err;
  }
}
