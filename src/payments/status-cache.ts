import type { BatchDoc, PaymentDoc, SettlementClaimDoc } from '../store/documents.js';

const MAX_ENTRIES = 50_000;
const BATCH_TTL_MS = 250;

/** A map that forgets its oldest entries past a size. */
class Bounded<V> {
  private readonly map = new Map<string, V>();
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, value: V): void {
    if (this.map.size >= MAX_ENTRIES) this.map.delete(this.map.keys().next().value as string);
    this.map.set(key, value);
  }
}

/**
 * What a status poll may remember between polls in one API process: facts that never change once
 * seen (a payment's capture fields, that it was accepted, its batch claim, a finished batch), and
 * an unfinished batch's state for BATCH_TTL_MS, so a hundred payments polled in one batch cost one
 * read of it. A poll lags its batch's recorded state by at most that TTL.
 */
export class PaymentStatusCache {
  readonly payments = new Bounded<PaymentDoc>();
  readonly accepted = new Bounded<true>();
  readonly claims = new Bounded<SettlementClaimDoc>();
  private readonly batches = new Bounded<{ doc: BatchDoc; at: number }>();

  async batch(batchId: string, nowMs: number, read: () => Promise<BatchDoc | null>): Promise<BatchDoc | null> {
    const hit = this.batches.get(batchId);
    if (hit && (hit.doc.status === 'CONFIRMED' || hit.doc.status === 'FAILED' || nowMs - hit.at < BATCH_TTL_MS)) return hit.doc;
    const doc = await read();
    if (doc) this.batches.set(batchId, { doc, at: nowMs });
    return doc;
  }
}
