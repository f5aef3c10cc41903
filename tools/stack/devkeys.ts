import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

export interface DevMerchantJwt {
  issuer: string;
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

function write(file: string, value: DevMerchantJwt): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

/** The dev stack's merchant-JWT signing key (Ed25519), generated once per DATA_DIR; the issuer follows the API port. */
export async function ensureDevMerchantJwt(file: string, issuer: string): Promise<DevMerchantJwt> {
  if (existsSync(file)) {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as DevMerchantJwt;
    if (stored.issuer !== issuer) write(file, { ...stored, issuer });
    return { ...stored, issuer };
  }
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const value: DevMerchantJwt = {
    issuer,
    kid,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'EdDSA', use: 'sig' },
    publicJwk: { ...publicJwk, kid, alg: 'EdDSA', use: 'sig' },
  };
  write(file, value);
  return value;
}
