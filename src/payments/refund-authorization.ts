import { recoverTypedDataAddress, type Hex } from 'viem';
import { isCanonicalSignature } from '../domain/signature.js';
import type { SettlementInfo } from '../api/deps.js';
import type { RefundAuthorizationFields } from '../domain/refunds.js';

const authorizationFields = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const;

const domainFields = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
] as const;

export function chainIdOf(network: string): number {
  const id = Number(network.split(':')[1]);
  if (!Number.isSafeInteger(id)) throw new Error(`network ${network} is not eip155:<chainId>`);
  return id;
}

function domainOf(s: SettlementInfo) {
  return { name: s.assetName, version: s.assetVersion, chainId: chainIdOf(s.network), verifyingContract: s.asset as `0x${string}` };
}

/**
 * The EIP-712 typed data the payout wallet signs, in the JSON form eth_signTypedData_v4 takes
 * (numbers as decimal strings, EIP712Domain listed), so a merchant can hand it to any wallet.
 */
export function refundTypedData(s: SettlementInfo, message: RefundAuthorizationFields) {
  return {
    types: { EIP712Domain: domainFields, ReceiveWithAuthorization: authorizationFields },
    primaryType: 'ReceiveWithAuthorization' as const,
    domain: domainOf(s),
    message,
  };
}

/** Whether `signature` is the canonical signature of `from` over the authorization (what the asset will check). */
export async function signedByFrom(s: SettlementInfo, a: RefundAuthorizationFields, signature: Hex): Promise<boolean> {
  if (!isCanonicalSignature(signature)) return false;
  const signer = await recoverTypedDataAddress({
    domain: domainOf(s),
    types: { ReceiveWithAuthorization: authorizationFields },
    primaryType: 'ReceiveWithAuthorization',
    message: {
      from: a.from as `0x${string}`,
      to: a.to as `0x${string}`,
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce as `0x${string}`,
    },
    signature,
  }).catch(() => null);
  return signer !== null && signer.toLowerCase() === a.from.toLowerCase();
}
