import type { Collections } from './collections.js';
import type { ApiKeyDoc, MerchantDoc } from './documents.js';
import { findApiKeyByHash, findApiKeysByHashes, findMerchant, findMerchantsByIds } from './merchants.js';
import { Lru } from '@credit-facilitator/wire/lru';

interface Remembered<T> {
  doc: T;
  /** When the read that produced doc started: the copy is at least this fresh. */
  at: number;
  usedAt: number;
}

/** Entries unused for this long are left to expire instead of being refreshed. */
const IDLE_AFTER_TTLS = 10;

/**
 * What authenticating a merchant request reads, remembered for ttlMs in one API process: the
 * merchant document (status, payout address, limits) and the live API key a request presented,
 * keyed by the key's hash. Every request authenticates, and polls alone are several a second per
 * pending payment, so without it each request costs two store reads. A key revoked, a merchant
 * disabled or given new limits is seen by every API process within ttlMs
 * (MERCHANT_AUTH_CACHE_MS; 0 reads on every request). Only live keys are remembered: an unknown or
 * revoked key is read again each time, so it cannot fill the cache.
 *
 * Entries in use are re-read together in the background every half ttlMs, one command per
 * collection whatever the number of merchants, so a busy merchant's requests never wait for a
 * read and the store sees two commands per half ttlMs instead of two per merchant per ttlMs. The
 * bound is the same: an entry is served only while the read behind it started less than ttlMs
 * ago, so a refresh that fails or lags leaves requests reading for themselves.
 */
export class MerchantCache {
  private readonly merchants: Lru<Remembered<MerchantDoc | null>>;
  private readonly keys: Lru<Remembered<ApiKeyDoc>>;
  private store: Collections | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private refreshing = false;

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
    if (hit && now - hit.at < this.ttlMs) {
      hit.usedAt = now;
      return hit.doc;
    }
    const doc = await findMerchant(c, merchantId);
    if (this.ttlMs > 0) this.remember(c, () => this.merchants.set(merchantId, { doc, at: now, usedAt: now }));
    return doc;
  }

  async findLiveApiKey(c: Collections, hash: string): Promise<ApiKeyDoc | null> {
    const now = this.nowMs();
    const hit = this.keys.get(hash);
    if (hit && now - hit.at < this.ttlMs) {
      hit.usedAt = now;
      return hit.doc;
    }
    const doc = await findApiKeyByHash(c, hash);
    if (!doc || doc.revokedAt !== null) return null;
    if (this.ttlMs > 0) this.remember(c, () => this.keys.set(hash, { doc, at: now, usedAt: now }));
    return doc;
  }

  /** Re-reads the entries in use, one command per collection; what it read is served for ttlMs from the read's start. */
  async refresh(): Promise<void> {
    const c = this.store;
    if (!c || this.refreshing) return;
    this.refreshing = true;
    try {
      const started = this.nowMs();
      const inUse = <T>(lru: Lru<Remembered<T>>) => [...lru.entries()].filter(([, r]) => started - r.usedAt < this.ttlMs * IDLE_AFTER_TTLS).map(([k]) => k);
      const merchantIds = inUse(this.merchants);
      const hashes = inUse(this.keys);
      const [merchants, keys] = await Promise.all([findMerchantsByIds(c, merchantIds), findApiKeysByHashes(c, hashes)]);
      const merchantById = new Map(merchants.map((m) => [m._id, m]));
      for (const id of merchantIds) {
        const usedAt = this.merchants.peek(id)?.usedAt ?? started;
        this.merchants.set(id, { doc: merchantById.get(id) ?? null, at: started, usedAt });
      }
      const keyByHash = new Map(keys.map((k) => [k._id, k]));
      for (const hash of hashes) {
        const doc = keyByHash.get(hash);
        const usedAt = this.keys.peek(hash)?.usedAt ?? started;
        if (!doc || doc.revokedAt !== null) this.keys.delete(hash);
        else this.keys.set(hash, { doc, at: started, usedAt });
      }
    } catch {
      // Entries age out on their own and requests read for themselves: a failed refresh changes no answer.
    } finally {
      this.refreshing = false;
    }
  }

  /** Stops the background refresh (a process shutting down, a test). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private remember(c: Collections, set: () => void): void {
    set();
    this.store = c;
    if (this.timer) return;
    this.timer = setInterval(() => void this.refresh(), Math.max(50, Math.floor(this.ttlMs / 2)));
    this.timer.unref();
  }
}
