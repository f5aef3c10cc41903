import type { Collections } from './collections.js';
import { findByIds } from './find-by-ids.js';
import type { ApiKeyDoc, MerchantDoc, MerchantRateLimits } from './documents.js';

export async function insertMerchant(c: Collections, doc: MerchantDoc): Promise<void> {
  await c.merchants.insertOne(doc);
}

export function findMerchant(c: Collections, merchantId: string): Promise<MerchantDoc | null> {
  return c.merchants.findOne({ _id: merchantId });
}

/** Merchants by id, one command per IDS_PER_READ. */
export function findMerchantsByIds(c: Collections, ids: readonly string[]): Promise<MerchantDoc[]> {
  return findByIds(c.merchants, ids);
}

/** API keys by hash, one command per IDS_PER_READ. */
export function findApiKeysByHashes(c: Collections, hashes: readonly string[]): Promise<ApiKeyDoc[]> {
  return findByIds(c.apiKeys, hashes);
}

export function listMerchants(c: Collections): Promise<MerchantDoc[]> {
  return c.merchants.find({}).sort({ createdAt: 1 }).toArray();
}

/** null clears the merchant's own limits, so the defaults apply again. */
export async function setMerchantRateLimits(c: Collections, merchantId: string, limits: MerchantRateLimits | null): Promise<void> {
  if (limits === null) await c.merchants.updateOne({ _id: merchantId }, { $unset: { rateLimits: '' } });
  else await c.merchants.updateOne({ _id: merchantId }, { $set: { rateLimits: limits } });
}

export async function insertApiKey(c: Collections, doc: ApiKeyDoc): Promise<void> {
  await c.apiKeys.insertOne(doc);
}

export function findApiKeyByHash(c: Collections, hash: string): Promise<ApiKeyDoc | null> {
  return c.apiKeys.findOne({ _id: hash });
}

export function listApiKeys(c: Collections, merchantId: string): Promise<ApiKeyDoc[]> {
  return c.apiKeys.find({ merchantId }).sort({ createdAt: 1 }).toArray();
}

/** Revokes by keyId; returns false when no live key of that merchant had the id. */
export async function revokeApiKey(c: Collections, merchantId: string, keyId: string, at: Date): Promise<boolean> {
  const r = await c.apiKeys.updateOne({ merchantId, keyId, revokedAt: null }, { $set: { revokedAt: at } });
  return r.modifiedCount === 1;
}

/**
 * Records that a key was used at `at`, unless a use within `minIntervalMs` is recorded already: the
 * filter makes it one write per key per interval across every API process, whatever the traffic.
 */
export async function touchApiKey(c: Collections, hash: string, at: Date, minIntervalMs: number): Promise<void> {
  await c.apiKeys.updateOne(
    { _id: hash, $or: [{ lastUsedAt: { $exists: false } }, { lastUsedAt: { $lt: new Date(at.getTime() - minIntervalMs) } }] },
    { $set: { lastUsedAt: at } },
  );
}
