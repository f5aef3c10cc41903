import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importJWK, SignJWT, type JWK } from 'jose';
import { getAddress, isAddress } from 'viem';
import { generateApiKey } from '../../src/auth/api-keys.js';
import { ALL_MERCHANT_PERMISSIONS } from '../../src/auth/permissions.js';
import { newId } from '@credit-facilitator/wire/ids';
import type { MerchantRateLimits } from '../../src/store/documents.js';
import { insertApiKey, insertMerchant, listApiKeys, listMerchants, findMerchant, revokeApiKey, setMerchantRateLimits } from '../../src/store/merchants.js';
import type { CliContext } from './context.js';
import { UsageError } from './output.js';

async function issueKey(ctx: CliContext, merchantId: string) {
  const k = generateApiKey();
  const keyId = `key_${newId().replace(/-/g, '').slice(0, 16)}`;
  await insertApiKey(ctx.store.c, {
    _id: k.hash,
    keyId,
    merchantId,
    prefix: k.displayPrefix,
    permissions: [...ALL_MERCHANT_PERMISSIONS],
    createdAt: new Date(),
    revokedAt: null,
  });
  return { keyId, apiKey: k.key, prefix: k.displayPrefix, permissions: ALL_MERCHANT_PERMISSIONS };
}

async function requireMerchant(ctx: CliContext, merchantId: string | undefined) {
  if (!merchantId) throw new UsageError('--merchant <merchantId> is required');
  const m = await findMerchant(ctx.store.c, merchantId.toLowerCase());
  if (!m) throw new UsageError(`no merchant ${merchantId}: list them with "merchant list"`);
  return m;
}

export async function createMerchant(ctx: CliContext, name: string | undefined, payout: string | undefined) {
  if (!name || name.trim() === '') throw new UsageError('--name <name> is required');
  if (!payout || !isAddress(payout)) throw new UsageError('--payout <0x address> is required: where settlements pay this merchant');
  const merchantId = newId();
  await insertMerchant(ctx.store.c, { _id: merchantId, name: name.trim(), payoutAddress: getAddress(payout).toLowerCase(), status: 'ACTIVE', createdAt: new Date() });
  return { merchantId, name: name.trim(), payoutAddress: getAddress(payout), ...(await issueKey(ctx, merchantId)) };
}

export interface RateLimitFlags {
  verifyPerMin?: string;
  verifyBurst?: string;
  capturePerMin?: string;
  captureBurst?: string;
  reset?: boolean;
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new UsageError(`--${flag} must be a whole number from 1 to 1000000`);
  return n;
}

/** Per-minute rate and burst come as a pair: half a policy would silently mix with the defaults. */
function policyFrom(perMin: string | undefined, burst: string | undefined, name: 'verify' | 'capture') {
  if (perMin === undefined && burst === undefined) return undefined;
  if (perMin === undefined || burst === undefined) throw new UsageError(`give both --${name}-per-min and --${name}-burst`);
  return { perMinute: positiveInt(perMin, `${name}-per-min`), burst: positiveInt(burst, `${name}-burst`) };
}

/** Sets (or with --reset clears) a merchant's own rate limits; the API applies them on its next request. */
export async function merchantLimits(ctx: CliContext, merchantId: string | undefined, flags: RateLimitFlags) {
  const m = await requireMerchant(ctx, merchantId);
  const verify = policyFrom(flags.verifyPerMin, flags.verifyBurst, 'verify');
  const capture = policyFrom(flags.capturePerMin, flags.captureBurst, 'capture');
  if (!flags.reset && !verify && !capture) throw new UsageError('give --verify-per-min/--verify-burst, --capture-per-min/--capture-burst, or --reset');
  const limits: MerchantRateLimits | null = flags.reset ? null : { ...m.rateLimits, ...(verify ? { verify } : {}), ...(capture ? { capture } : {}) };
  await setMerchantRateLimits(ctx.store.c, m._id, limits);
  const d = ctx.env;
  return {
    merchantId: m._id,
    verify: limits?.verify ?? { perMinute: d.RATE_LIMIT_VERIFY_PER_MIN, burst: d.RATE_LIMIT_VERIFY_BURST, default: true },
    capture: limits?.capture ?? { perMinute: d.RATE_LIMIT_CAPTURE_PER_MIN, burst: d.RATE_LIMIT_CAPTURE_BURST, default: true },
  };
}

export async function merchantList(ctx: CliContext) {
  const all = await listMerchants(ctx.store.c);
  return all.map((m) => ({ merchantId: m._id, name: m.name, payoutAddress: m.payoutAddress, status: m.status, createdAt: m.createdAt.toISOString() }));
}

export async function keyIssue(ctx: CliContext, merchantId: string | undefined) {
  const m = await requireMerchant(ctx, merchantId);
  return { merchantId: m._id, ...(await issueKey(ctx, m._id)) };
}

export async function keyList(ctx: CliContext, merchantId: string | undefined) {
  const m = await requireMerchant(ctx, merchantId);
  const keys = await listApiKeys(ctx.store.c, m._id);
  return keys.map((k) => ({ keyId: k.keyId, prefix: k.prefix, status: k.revokedAt ? 'revoked' : 'active', createdAt: k.createdAt.toISOString(), ...(k.revokedAt ? { revokedAt: k.revokedAt.toISOString() } : {}) }));
}

export async function keyRevoke(ctx: CliContext, merchantId: string | undefined, keyId: string | undefined) {
  const m = await requireMerchant(ctx, merchantId);
  if (!keyId) throw new UsageError('--key <keyId> is required: find it with "key list"');
  if (!(await revokeApiKey(ctx.store.c, m._id, keyId, new Date()))) throw new UsageError(`no active key ${keyId} for merchant ${m._id}`);
  return { merchantId: m._id, keyId, status: 'revoked' };
}

/** Issues the new key first, then revokes the old one, so the merchant is never without a key. */
export async function keyRotate(ctx: CliContext, merchantId: string | undefined, keyId: string | undefined) {
  const m = await requireMerchant(ctx, merchantId);
  if (!keyId) throw new UsageError('--key <keyId> is required: find it with "key list"');
  const fresh = await issueKey(ctx, m._id);
  if (!(await revokeApiKey(ctx.store.c, m._id, keyId, new Date()))) throw new UsageError(`no active key ${keyId} for merchant ${m._id}`);
  return { merchantId: m._id, revokedKeyId: keyId, ...fresh };
}

/** Dev only: signs a merchant user JWT with the key the dev stack generated. */
export async function jwtIssue(ctx: CliContext, opts: { merchant?: string; permissions?: string; mfa?: boolean; ttl?: string }) {
  const m = await requireMerchant(ctx, opts.merchant);
  let file: { issuer: string; kid: string; privateJwk: JWK };
  try {
    file = JSON.parse(readFileSync(join(ctx.dataDir, 'dev-merchant-jwt.json'), 'utf8')) as typeof file;
  } catch {
    throw new UsageError('no dev JWT key in DATA_DIR: start the stack with npm start first (merchant JWTs from a real issuer need no CLI)');
  }
  const permissions = opts.permissions ? opts.permissions.split(',').map((s) => s.trim()).filter(Boolean) : [...ALL_MERCHANT_PERMISSIONS];
  const ttl = Number(opts.ttl ?? '900');
  if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError('--ttl must be a positive number of seconds');
  const now = Math.floor(Date.now() / 1000);
  const key = await importJWK(file.privateJwk, 'EdDSA');
  const token = await new SignJWT({ merchant_id: m._id, permissions, amr: opts.mfa ? ['pwd', 'mfa'] : ['pwd'], auth_time: now })
    .setProtectedHeader({ alg: 'EdDSA', kid: file.kid })
    .setIssuer(file.issuer)
    .setAudience(ctx.env.MERCHANT_JWT_AUDIENCE)
    .setSubject(`dev-user-${m._id.slice(0, 8)}`)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .sign(key);
  return { merchantId: m._id, permissions, mfa: Boolean(opts.mfa), expiresIn: ttl, token };
}
