/** Order of the secp256k1 group. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * The other valid ECDSA signature over the same hash by the same key: s -> N - s, recovery bit
 * flipped. A second, different signature the wallet "made", without a second signing.
 */
export function highSTwin(signature: `0x${string}`): `0x${string}` {
  const r = signature.slice(2, 66);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = parseInt(signature.slice(130, 132), 16);
  return `0x${r}${(N - s).toString(16).padStart(64, '0')}${v === 27 ? '1c' : '1b'}`;
}
