import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { ApiError } from '../domain/errors.js';
import type { Receipt } from '../domain/payment.js';
import { loadOrCreateKeyDoc } from '../store/keys.js';
import type { Store } from '../store/mongo.js';

interface ReceiptKeyDoc {
  _id: 'current';
  privateJwk: JWK;
  createdAt: Date;
}

export interface ReceiptSigner {
  /** Published at GET /facilitator/receipt-keys; anyone verifies a receipt with it, offline. */
  publicJwks: { keys: JWK[] };
  sign(issuer: string, receipt: Receipt): Promise<string>;
}

const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'kid', 'alg', 'use'];
export const RECEIPT_JWT_TYPE = 'x402-receipt+jwt';

/**
 * The facilitator's receipt-signing key (ES256), its own and not the authorization server's, so
 * either can be rotated alone. The first API process makes it; every other reads the same one.
 */
export async function loadOrCreateReceiptSigner(store: Store): Promise<ReceiptSigner> {
  const doc = await loadOrCreateKeyDoc<ReceiptKeyDoc>(store, 'receipt_signing_keys', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: randomBytes(8).toString('hex'), alg: 'ES256', use: 'sig' };
    return { _id: 'current', privateJwk: jwk, createdAt: new Date() };
  });
  const privateJwk = doc.privateJwk;
  const key = await importJWK(privateJwk, 'ES256');
  const publicJwk = Object.fromEntries(Object.entries(privateJwk).filter(([k]) => PUBLIC_MEMBERS.includes(k))) as JWK;
  return {
    publicJwks: { keys: [publicJwk] },
    sign: (issuer, receipt) =>
      new SignJWT({ receipt })
        .setProtectedHeader({ alg: 'ES256', kid: privateJwk.kid!, typ: RECEIPT_JWT_TYPE })
        .setIssuer(issuer)
        .setSubject(receipt.paymentId)
        .setIssuedAt()
        .sign(key),
  };
}

/** A CONFIRMED payment's receipt as a compact JWS the merchant can hand to its customer; earlier states are 409. */
export async function signedReceipt(signer: ReceiptSigner, issuer: string, receipt: Receipt): Promise<{ paymentId: string; jws: string }> {
  if (receipt.status !== 'CONFIRMED') throw ApiError.paymentNotConfirmed(receipt.status);
  return { paymentId: receipt.paymentId, jws: await signer.sign(issuer, receipt) };
}
