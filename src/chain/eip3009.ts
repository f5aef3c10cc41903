import { randomBytes } from 'node:crypto';
import { parseSignature, type Hash, type Hex } from 'viem';
import type { ChainContext } from './context.js';
import type { Deployment } from './deploy.js';
import { ContractRevertedError } from './errors.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { receiveWithAuthorizationTypes, transferWithAuthorizationTypes } from '../domain/typed-data.js';
import { sendSettlementCall } from './send-settlement-call.js';

/** An EIP-3009 authorization message (TransferWithAuthorization and ReceiveWithAuthorization share the fields). */
export interface Eip3009Authorization {
  from: `0x${string}`;
  to: `0x${string}`;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: `0x${string}`;
}

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
 * A nonce bound to an id: its 16 UUID bytes followed by 16 random bytes. The settlement contract requires
 * this binding on repayments (the borrower) and refunds (the payment), so a signed authorization can only
 * ever serve the id it names.
 */
export function idBoundNonce(what: string, id: string, random: Uint8Array = randomBytes(16)): `0x${string}` {
  if (random.length !== 16) throw new RangeError(`${what} nonce needs 16 random bytes`);
  return `0x${uuidToBytes32(id).slice(34)}${Buffer.from(random).toString('hex')}`;
}

/** A repayment nonce, bound to the borrower: a signed repayment can only ever reduce the named borrower's debt. */
export function repaymentNonce(borrowerId: string, random?: Uint8Array): `0x${string}` {
  return idBoundNonce('repayment', borrowerId, random);
}

/** A ReceiveWithAuthorization of `value` base units from `from` to the settlement contract, valid from now for an hour unless told. */
export function authorizationToSettlement(
  d: Deployment,
  opts: { from: `0x${string}`; value: bigint; nonce: `0x${string}`; validForSeconds?: number; nowSeconds?: number },
): Eip3009Authorization {
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  return {
    from: opts.from,
    to: d.settlement,
    value: opts.value,
    validAfter: 0n,
    validBefore: BigInt(now + (opts.validForSeconds ?? 3600)),
    nonce: opts.nonce,
  };
}

/** The ReceiveWithAuthorization a borrower's wallet signs to repay `value` base units to the settlement contract. */
export function buildRepaymentAuthorization(
  d: Deployment,
  opts: { borrowerId: string; from: `0x${string}`; value: bigint; validForSeconds?: number; nowSeconds?: number; nonce?: `0x${string}` },
): Eip3009Authorization {
  return authorizationToSettlement(d, { ...opts, nonce: opts.nonce ?? repaymentNonce(opts.borrowerId) });
}

/** The contract refused the repayment in simulation (a used nonce, a wrong signature, no debt...). */
export class RepaymentRevertedError extends ContractRevertedError {
  override name = 'RepaymentRevertedError';
}

/** Redeems a signed repayment through the settlement contract; returns the transaction hash once broadcast. */
export async function repayWithAuthorization(
  ctx: ChainContext,
  args: { borrowerId: string; authorization: Eip3009Authorization; signature: Hex },
): Promise<Hash> {
  const a = args.authorization;
  if (a.to.toLowerCase() !== ctx.deployment.settlement.toLowerCase()) throw new RangeError('repayment must be authorized to the settlement contract');
  const sig = parseSignature(args.signature);
  return sendSettlementCall(ctx, {
    functionName: 'repayWithAuthorization',
    args: [uuidToBytes32(args.borrowerId), a.from, a.value, a.validAfter, a.validBefore, a.nonce, 27 + sig.yParity, sig.r, sig.s],
    revertsAs: RepaymentRevertedError,
  });
}
