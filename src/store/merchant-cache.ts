import type { Collections } from './collections.js';
import type { ApiKeyDoc, MerchantDoc } from './documents.js';
import { findApiKeyByHash, findMerchant } from './merchants.js';
import { Lru } from '@credit-facilitator/wire/lru';

interface Remembered<T> {
  doc: T;
  at: number;
}

/**
 * What authenticating a merchant request reads, remembered for ttlMs in one API process: the
 * merchant document (status, payout address, limits) and the live API key a request presented,
 * keyed by the key's hash. Every request authenticates, and polls alone are several a second per
 * pending payment, so without it each request costs two store reads. A key revoked, a merchant
 * disabled or given new limits is seen by every API process within ttlMs
 * (MERCHANT_AUTH_CACHE_MS; 0 reads on every request). Only live keys are remembered: an unknown or
 * revoked key is read again each time, so it cannot fill the cache.
 */
export class MerchantCache {
  private readonly merchants: Lru<Remembered<MerchantDoc | null>>;
  private readonly keys: Lru<Remembered<ApiKeyDoc>>;

  constructor(
    private readonly ttlMs = 1000,
    private readonly nowMs: () => number = Date.now,
    maxEntries = 10_000,
  ) {
    this.merchants = new Lru(maxEntries);
    this.keys = new Lru(maxEntries);
  }

  async find(c: Collections, merchantId: string): Promise<MerchantDoc | null> {
    const now = this.nowMs();
    const hit = this.merchants.get(merchantId);
    if (hit && now - hit.at < this.ttlMs) return hit.doc;
    const doc = await findMerchant(c, merchantId);
    if (this.ttlMs > 0) this.merchants.set(merchantId, { doc, at: now });
    return doc;
  }

  async findLiveApiKey(c: Collections, hash: string): Promise<ApiKeyDoc | null> {
    const now = this.nowMs();
    const hit = this.keys.get(hash);
    if (hit && now - hit.at < this.ttlMs) return hit.doc;
    const doc = await findApiKeyByHash(c, hash);
    if (!doc || doc.revokedAt !== null) return null;
    if (this.ttlMs > 0) this.keys.set(hash, { doc, at: now });
    return doc;
  }
}
