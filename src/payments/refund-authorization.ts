import { recoverTypedDataAddress, type Hex } from 'viem';
import { authorizationFromStrings } from '../chain/eip3009.js';
import { isCanonicalSignature } from '../domain/signature.js';
import type { SettlementInfo } from '../domain/settlement-info.js';
import type { RefundAuthorizationFields } from '../domain/refunds.js';
import { eip712DomainTypes, receiveWithAuthorizationTypes } from '../domain/typed-data.js';

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
    types: { ...eip712DomainTypes, ...receiveWithAuthorizationTypes },
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
    types: receiveWithAuthorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message: authorizationFromStrings(a),
    signature,
  }).catch(() => null);
  return signer !== null && signer.toLowerCase() === a.from.toLowerCase();
}
