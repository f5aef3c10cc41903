/** On-chain ids: bytes32 = the UUID's 16 bytes left-padded with zeros (DECISIONS.md, "The credit envelope"). */

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BYTES32_UUID_RE = /^0x0{32}([0-9a-f]{32})$/i;

export function uuidToBytes32(uuid: string): `0x${string}` {
  if (!UUID_RE.test(uuid)) throw new TypeError(`not a UUID: ${JSON.stringify(uuid)}`);
  return `0x${'0'.repeat(32)}${uuid.replace(/-/g, '').toLowerCase()}`;
}

export function bytes32ToUuid(value: string): string {
  const m = BYTES32_UUID_RE.exec(value);
  if (!m) throw new TypeError(`not a left-padded UUID bytes32: ${JSON.stringify(value)}`);
  const h = m[1]!.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
