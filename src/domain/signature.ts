/**
 * The one secp256k1 signature form we accept from a wallet: 65 bytes r‖s‖v with 0 < r < N,
 * 0 < s ≤ N/2 (EIP-2 low s) and v ∈ {27, 28}. The asset and the settlement contract refuse a
 * high-s signature, and a second encoding of the same signature (its high-s twin, the 64-byte
 * EIP-2098 compact form, v as 0/1) would otherwise pass our checks yet differ byte for byte.
 */

/** Order of the secp256k1 group. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** Largest canonical s (floor(N/2)), the bound OpenZeppelin's ECDSA and the asset enforce. */
export const SECP256K1_HALF_N = SECP256K1_N >> 1n;

const SIGNATURE_HEX = /^0x[0-9a-fA-F]{130}$/;

/** Whether `signature` is a canonical 65-byte low-s signature with v 27 or 28. */
export function isCanonicalSignature(signature: unknown): signature is `0x${string}` {
  if (typeof signature !== 'string' || !SIGNATURE_HEX.test(signature)) return false;
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = parseInt(signature.slice(130, 132), 16);
  return r > 0n && r < SECP256K1_N && s > 0n && s <= SECP256K1_HALF_N && (v === 27 || v === 28);
}
