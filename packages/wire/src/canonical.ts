import canonicalizeModule from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

// canonicalize is CommonJS (`module.exports = fn`) but its typings declare `export default`,
// so under NodeNext the default import may be the function itself or a `{ default }` wrapper.
const serialize = (
  typeof canonicalizeModule === 'function'
    ? canonicalizeModule
    : (canonicalizeModule as unknown as { default: unknown }).default
) as (input: unknown) => string | undefined;

/** RFC 8785 (JCS) canonical JSON. Throws on values JSON cannot represent (undefined, NaN, Infinity, bigint). */
export function canonicalJson(value: unknown): string {
  const out = serialize(value);
  if (out === undefined) throw new TypeError('value has no JSON representation');
  return out;
}

/** Lowercase hex SHA-256; strings are hashed as UTF-8. */
export function sha256Hex(data: string | Uint8Array): string {
  return bytesToHex(sha256(typeof data === 'string' ? utf8ToBytes(data) : data));
}

/** Stable digest of a JSON value: independent of key order and number spelling. */
export function fingerprint(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
