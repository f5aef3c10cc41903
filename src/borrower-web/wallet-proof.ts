import { verifyTypedData } from 'viem';
import type { BorrowerWebDeps } from './deps.js';
import { publicOrigin } from '../config/env.js';
import { isCanonicalSignature } from '../domain/signature.js';
import { walletProofTypedData, type BorrowerDomainInput } from '../domain/typed-data.js';

/** How old a signed WalletProof may be when it reaches us. */
export const WALLET_PROOF_MAX_AGE_SECONDS = 300;

export function borrowerDomainInput(deps: BorrowerWebDeps): BorrowerDomainInput {
  return { chainId: deps.env.CHAIN_ID, verifyingContract: deps.settlement.settlementContract as `0x${string}` };
}

export interface WalletProofInput {
  wallet: `0x${string}`;
  /** The OAuth client the borrower signs in to. */
  clientId: string;
  /** The interaction uid: single use, so a proof cannot be replayed into another sign-in. */
  challenge: string;
  issuedAt: number;
}

/**
 * The WalletProof for this sign-in, naming our public origin (`domain`, `uri`) as EIP-4361 does:
 * the wallet shows which site asks, and a proof signed for another origin (a look-alike page
 * relaying our challenge) never verifies here, since we rebuild the message with our own origin.
 */
export function walletProofFor(deps: BorrowerWebDeps, m: WalletProofInput) {
  return walletProofTypedData(borrowerDomainInput(deps), { ...m, origin: publicOrigin(deps.env) });
}

/** null when `signature` is the wallet's fresh WalletProof for this sign-in, else what is wrong (safe to show). */
export async function walletProofProblem(deps: BorrowerWebDeps, m: WalletProofInput, signature: `0x${string}`): Promise<string | null> {
  const now = Math.floor(deps.nowMs() / 1000);
  if (m.issuedAt > now + deps.env.CLOCK_SKEW_SECONDS) return 'The signed sign-in message is dated in the future; check your clock and sign again.';
  if (now - m.issuedAt > WALLET_PROOF_MAX_AGE_SECONDS) return 'The signed sign-in message is older than 5 minutes; sign again.';
  const td = walletProofFor(deps, m);
  let valid = false;
  try {
    // Canonical 65-byte low-s only, as for every wallet signature we take (src/domain/signature.ts).
    valid = isCanonicalSignature(signature) && (await verifyTypedData({ ...td, address: m.wallet, signature }));
  } catch {
    valid = false;
  }
  return valid ? null : 'The signature is not a WalletProof for this sign-in made by that wallet; sign again with the wallet you connected.';
}
