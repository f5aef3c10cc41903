import { z } from 'zod';
import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { Lru } from './lru.js';
import { randomBytes, utf8ToBytes, bytesToHex } from '@noble/hashes/utils.js';
import { AmountString } from './amounts.js';
import { canonicalJson } from './canonical.js';
import { isUuid } from './ids.js';
import { fromBase64Url, toBase64Url } from './base64url.js';

const lower = (s: string): string => s.toLowerCase();

export const UuidString = z.string().refine(isUuid, 'must be a UUID').transform(lower);
export const AddressString = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
  .transform(lower);
export const NetworkString = z
  .string()
  .regex(/^eip155:[1-9][0-9]{0,31}$/, 'must be a CAIP-2 eip155 network, e.g. eip155:84532');
const UnixSeconds = z.number().int().nonnegative();

export const VoucherSchema = z
  .object({
    v: z.literal(1),
    voucherId: UuidString,
    spendIntentId: UuidString,
    borrowerId: UuidString,
    operationalAgentId: UuidString,
    merchantId: UuidString,
    payTo: AddressString,
    amount: AmountString,
    asset: AddressString,
    network: NetworkString,
    resource: z.string().min(1).max(2048),
    orderRef: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII'),
    nonce: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x followed by 32 bytes of hex')
      .transform(lower),
    issuedAt: UnixSeconds,
    expiresAt: UnixSeconds,
  })
  .strict();

export type Voucher = z.output<typeof VoucherSchema>;

export const VOUCHER_SIGNING_PREFIX = 'x402-credit-voucher:v1\n';
/** Ed25519 signatures are 64 bytes: 86 base64url characters without padding. */
export const SIGNATURE_LENGTH = 86;
export const PUBLIC_KEY_BYTES = 32;

export type VoucherParse = { ok: true; voucher: Voucher } | { ok: false; detail: string };

/**
 * Schema check plus normal form: the signature covers the voucher exactly as sent, so a
 * voucher the schema would rewrite (upper-case hex or ids) is refused instead of silently
 * verified against bytes the agent never signed.
 */
export function parseVoucher(raw: unknown): VoucherParse {
  const r = VoucherSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    const where = i && i.path.length ? `voucher.${i.path.map(String).join('.')}` : 'voucher';
    return { ok: false, detail: `${where}: ${i?.message ?? 'invalid'}` };
  }
  if (canonicalJson(raw) !== canonicalJson(r.data)) {
    return { ok: false, detail: 'voucher: ids, addresses and nonce must be lowercase' };
  }
  return { ok: true, voucher: r.data };
}

/** The exact string an agent Ed25519-signs (as UTF-8): prefix + RFC 8785 canonical JSON of the voucher. */
export function voucherSigningInput(v: Voucher): string {
  return VOUCHER_SIGNING_PREFIX + canonicalJson(v);
}

export function voucherSigningBytes(v: Voucher): Uint8Array {
  return utf8ToBytes(voucherSigningInput(v));
}

export function signVoucher(v: Voucher, privateKey: Uint8Array): string {
  return toBase64Url(ed25519.sign(voucherSigningBytes(v), privateKey));
}

const strictKeys = new Lru<boolean>(10_000);

/** A canonical encoding of a point that is not of small order (which would "verify" forged signatures). */
function isStrictPublicKey(publicKey: Uint8Array): boolean {
  const id = toBase64Url(publicKey);
  let ok = strictKeys.get(id);
  if (ok === undefined) {
    try {
      ok = !ed25519.Point.fromBytes(publicKey, false).isSmallOrder();
    } catch {
      ok = false;
    }
    strictKeys.set(id, ok);
  }
  return ok;
}

/**
 * Strict RFC 8032 verification, as the pure-JS curve does with ZIP-215 off: canonical encodings,
 * S < L, and no small-order key. Never throws. The curve check of the key runs once per key; the
 * signature itself is checked by OpenSSL's Ed25519 (node:crypto), about thirty times faster than
 * the pure-JS curve, and every capture verifies one voucher. The unit tests hold both to the same verdicts.
 */
export function verifyVoucherSignature(v: Voucher, signature: string, publicKey: Uint8Array): boolean {
  try {
    const sig = fromBase64Url(signature, 64);
    if (!sig || !(publicKey instanceof Uint8Array) || publicKey.length !== PUBLIC_KEY_BYTES || !isStrictPublicKey(publicKey)) return false;
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(publicKey) }, format: 'jwk' });
    return cryptoVerify(null, voucherSigningBytes(v), key, sig);
  } catch {
    return false;
  }
}

export function generateAgentKeyPair(): { privateKey: Uint8Array; publicKey: Uint8Array } {
  const { secretKey, publicKey } = ed25519.keygen();
  return { privateKey: secretKey, publicKey };
}

export function publicKeyFromPrivate(privateKey: Uint8Array): Uint8Array {
  return ed25519.getPublicKey(privateKey);
}

/** base64url without padding (keys and signatures). */
export function encodeKey(bytes: Uint8Array): string {
  return toBase64Url(bytes);
}

/** A 32-byte Ed25519 public key from base64url, or null when malformed. */
export function decodePublicKey(s: string): Uint8Array | null {
  return fromBase64Url(s, PUBLIC_KEY_BYTES);
}

/** A 32-byte Ed25519 private key (seed) from base64url, or null when malformed. */
export function decodePrivateKey(s: string): Uint8Array | null {
  return fromBase64Url(s, 32);
}

export function randomNonce(): `0x${string}` {
  return `0x${bytesToHex(randomBytes(32))}`;
}
