const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_V4_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const BYTES32_RE = /^0x[0-9a-fA-F]{64}$/;
const ZERO_PAD = '0'.repeat(32);

/** Any UUID in the 8-4-4-4-12 hex form, either case. */
export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/** A random (version 4, RFC 4122 variant) UUID, as Idempotency-Key requires. */
export function isUuidV4(s: string): boolean {
  return UUID_V4_RE.test(s);
}

/** On-chain id: the 16 UUID bytes left-padded with 16 zero bytes, lowercase hex. */
export function uuidToBytes32(uuid: string): `0x${string}` {
  if (!isUuid(uuid)) throw new TypeError('not a UUID');
  return `0x${ZERO_PAD}${uuid.replaceAll('-', '').toLowerCase()}`;
}

export function bytes32ToUuid(b: `0x${string}`): string {
  if (!BYTES32_RE.test(b)) throw new TypeError('not a bytes32 hex value');
  const hex = b.slice(2).toLowerCase();
  if (!hex.startsWith(ZERO_PAD)) throw new TypeError('bytes32 does not hold a UUID (non-zero padding)');
  const u = hex.slice(32);
  return `${u.slice(0, 8)}-${u.slice(8, 12)}-${u.slice(12, 16)}-${u.slice(16, 20)}-${u.slice(20)}`;
}

/** A fresh lowercase UUID v4 (the one place the domain touches randomness for ids). */
export function newId(): string {
  return crypto.randomUUID();
}
