const B64URL_RE = /^[A-Za-z0-9_-]*$/;

/** base64url without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/**
 * Strict base64url decode: only the URL alphabet, no padding, and only the one canonical
 * spelling (Buffer alone would ignore stray characters and non-zero trailing bits).
 * Returns null when malformed or when `length` is given and not matched.
 */
export function fromBase64Url(s: string, length?: number): Uint8Array | null {
  if (typeof s !== 'string' || !B64URL_RE.test(s) || s.length % 4 === 1) return null;
  const buf = Buffer.from(s, 'base64url');
  if (buf.toString('base64url') !== s) return null;
  if (length !== undefined && buf.length !== length) return null;
  return new Uint8Array(buf);
}
