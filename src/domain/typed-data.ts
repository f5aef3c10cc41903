import { uuidToBytes32 } from '@credit-facilitator/wire/ids';

/**
 * Every EIP-712 type list we sign or check, and the messages the borrower signs in their own
 * wallet. Pure builders: the caller passes ids, nonces and clocks. Repayments and refunds are
 * USDC EIP-3009 authorizations in the token's own domain; their typed data is built in
 * src/chain/eip3009.ts from the lists here.
 */
export interface BorrowerDomainInput {
  chainId: number;
  /** The settlement contract: signatures are bound to one deployment. */
  verifyingContract: `0x${string}`;
}

export function borrowerDomain(d: BorrowerDomainInput) {
  return { name: 'x402 Credit Facilitator', version: '1', chainId: d.chainId, verifyingContract: d.verifyingContract } as const;
}

export const walletProofTypes = {
  WalletProof: [
    { name: 'wallet', type: 'address' },
    { name: 'statement', type: 'string' },
    /** As in EIP-4361: the host (authority) of the service asking, and its origin. */
    { name: 'domain', type: 'string' },
    { name: 'uri', type: 'string' },
    { name: 'clientId', type: 'string' },
    { name: 'challenge', type: 'string' },
    { name: 'issuedAt', type: 'uint64' },
  ],
} as const;

export const facilityAcceptanceTypes = {
  FacilityAcceptance: [
    { name: 'borrowerId', type: 'bytes32' },
    { name: 'wallet', type: 'address' },
    { name: 'creditLimit', type: 'uint256' },
    { name: 'asset', type: 'address' },
    { name: 'termsHash', type: 'bytes32' },
    { name: 'nonce', type: 'bytes32' },
    { name: 'deadline', type: 'uint64' },
  ],
} as const;

export const agentGrantTypes = {
  AgentGrant: [
    { name: 'borrowerId', type: 'bytes32' },
    { name: 'operationalAgentId', type: 'bytes32' },
    /** The agent's Ed25519 public key, its 32 raw bytes. */
    { name: 'agentPublicKey', type: 'bytes32' },
    { name: 'perPaymentLimit', type: 'uint256' },
    { name: 'dailyLimit', type: 'uint256' },
    { name: 'expiresAt', type: 'uint64' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** EIP712Domain as listed in eth_signTypedData_v4 JSON, for a domain of name, version, chainId and verifyingContract. */
export const eip712DomainTypes = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
  ],
} as const;

/** EIP-3009 authorizations: TransferWithAuthorization and ReceiveWithAuthorization share the fields. */
const eip3009AuthorizationFields = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const;

export const receiveWithAuthorizationTypes = { ReceiveWithAuthorization: eip3009AuthorizationFields } as const;
export const transferWithAuthorizationTypes = { TransferWithAuthorization: eip3009AuthorizationFields } as const;

export const WALLET_PROOF_STATEMENT = 'Sign in to the x402 credit facilitator. This proves you control this wallet; it moves no funds.';

export function walletProofTypedData(
  d: BorrowerDomainInput,
  m: { wallet: `0x${string}`; origin: string; clientId: string; challenge: string; issuedAt: number },
) {
  const origin = new URL(m.origin);
  return {
    domain: borrowerDomain(d),
    types: walletProofTypes,
    primaryType: 'WalletProof',
    message: {
      wallet: m.wallet,
      statement: WALLET_PROOF_STATEMENT,
      domain: origin.host,
      uri: origin.origin,
      clientId: m.clientId,
      challenge: m.challenge,
      issuedAt: BigInt(m.issuedAt),
    },
  } as const;
}

export function facilityAcceptanceTypedData(
  d: BorrowerDomainInput,
  m: { borrowerId: string; wallet: `0x${string}`; creditLimit: bigint; asset: `0x${string}`; termsHash: `0x${string}`; nonce: `0x${string}`; deadline: number },
) {
  return {
    domain: borrowerDomain(d),
    types: facilityAcceptanceTypes,
    primaryType: 'FacilityAcceptance',
    message: { ...m, borrowerId: uuidToBytes32(m.borrowerId), deadline: BigInt(m.deadline) },
  } as const;
}

export function agentGrantTypedData(
  d: BorrowerDomainInput,
  m: {
    borrowerId: string;
    operationalAgentId: string;
    agentPublicKeyHex: `0x${string}`;
    perPaymentLimit: bigint;
    dailyLimit: bigint;
    expiresAt: number;
    nonce: `0x${string}`;
  },
) {
  return {
    domain: borrowerDomain(d),
    types: agentGrantTypes,
    primaryType: 'AgentGrant',
    message: {
      borrowerId: uuidToBytes32(m.borrowerId),
      operationalAgentId: uuidToBytes32(m.operationalAgentId),
      agentPublicKey: m.agentPublicKeyHex,
      perPaymentLimit: m.perPaymentLimit,
      dailyLimit: m.dailyLimit,
      expiresAt: BigInt(m.expiresAt),
      nonce: m.nonce,
    },
  } as const;
}

/** JSON-safe typed data (bigints as decimal strings), as eth_signTypedData_v4 and tool output carry it. */
export function typedDataToJson(td: { domain: object; types: object; primaryType: string; message: object }): Record<string, unknown> {
  return JSON.parse(JSON.stringify(td, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as Record<string, unknown>;
}
