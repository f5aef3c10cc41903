import type { Collections } from './collections.js';
import type { MerchantDoc } from './documents.js';
import { findMerchant } from './merchants.js';
import { Lru } from '../domain/lru.js';

/**
 * Merchant documents remembered for a second in one API process: every merchant request reads
 * its merchant (status, payout address, limits), and polls alone are several a second per pending
 * payment. A merchant disabled or given new limits is seen within ttlMs. API keys are not cached:
 * a revoked key is refused on its next request.
 */
export class MerchantCache {
  private readonly docs: Lru<{ doc: MerchantDoc | null; at: number }>;

  constructor(
    private readonly ttlMs = 1000,
    private readonly nowMs: () => number = Date.now,
    maxEntries = 10_000,
  ) {
    this.docs = new Lru(maxEntries);
  }

  async find(c: Collections, merchantId: string): Promise<MerchantDoc | null> {
    const now = this.nowMs();
    const hit = this.docs.get(merchantId);
    if (hit && now - hit.at < this.ttlMs) return hit.doc;
    const doc = await findMerchant(c, merchantId);
    this.docs.set(merchantId, { doc, at: now });
    return doc;
  }
}
