import type { Collections } from '../store/collections.js';
import type { BatchDoc, PaymentDoc } from '../store/documents.js';
import { announcedBatches, findBatch, recentVoids } from '../store/settlement-queue.js';
import { Lru } from '@credit-facilitator/wire/lru';

const BATCH_TTL_MS = 250;
const BOARD_TTL_MS = 250;

/**
 * How much one API process remembers. Polls go to recent payments (a merchant polls until
 * CONFIRMED, seconds to a minute), so the working set is the last few minutes of captures; an
 * older payment costs one store read by _id. The bounds keep the heap flat under a steady load
 * (a 55-minute soak grew the heap by 34 MB with 100,000-entry maps holding whole payments).
 */
export interface StatusCacheSizes {
  /** Payments, their accepted flag and their batch: about 1.5 KB per payment. */
  payments: number;
  /** Batches, each with its payment ids. */
  batches: number;
}

export const DEFAULT_STATUS_CACHE_SIZES: StatusCacheSizes = { payments: 10_000, batches: 500 };

const finished = (b: BatchDoc) => b.status === 'CONFIRMED' || b.status === 'FAILED';

/**
 * What status polls remember between polls in one API process, so a poll costs about one store
 * read (the merchant's credential) whatever the number of pending payments: facts that never
 * change once seen (a payment's capture fields, that it was accepted, the batch it rides in, a
 * finished batch), an unfinished batch's state for BATCH_TTL_MS, and the shards' announced
 * batches (read at most every BOARD_TTL_MS, each new batch once, with its payment ids). A poll
 * lags its batch's recorded state by at most those TTLs.
 */
export class PaymentStatusCache {
  readonly payments: Lru<PaymentDoc>;
  readonly accepted: Lru<true>;
  private readonly batchOfPayment: Lru<string>;
  private readonly batches: Lru<{ doc: BatchDoc; at: number }>;
  private readonly voided: Lru<true>;
  private boardReadAt = 0;
  private boardRead: Promise<void> | undefined;

  constructor(sizes: StatusCacheSizes = DEFAULT_STATUS_CACHE_SIZES) {
    this.payments = new Lru(sizes.payments);
    this.accepted = new Lru(sizes.payments);
    this.batchOfPayment = new Lru(sizes.payments);
    this.batches = new Lru(sizes.batches);
    this.voided = new Lru(sizes.payments);
  }

  /** Whether the board says this payment was voided (recently, by any API process). */
  async wasVoided(c: Collections, shards: number, paymentId: string, nowMs: number): Promise<boolean> {
    if (!this.voided.get(paymentId)) await this.batchOf(c, shards, paymentId, nowMs);
    return this.voided.get(paymentId) === true;
  }

  /** A capture this process accepted: its polls here need not read the payment or its spend intent's fate. */
  rememberAccepted(doc: PaymentDoc): void {
    this.payments.set(doc._id, doc);
    this.accepted.set(doc._id, true);
  }

  rememberBatchOf(paymentId: string, batchId: string): void {
    this.batchOfPayment.set(paymentId, batchId);
  }

  /** The batch a payment rides in, as far as the shards have announced; undefined while it waits. */
  async batchOf(c: Collections, shards: number, paymentId: string, nowMs: number): Promise<string | undefined> {
    const known = this.batchOfPayment.get(paymentId);
    if (known) return known;
    if (nowMs - this.boardReadAt >= BOARD_TTL_MS) {
      this.boardReadAt = nowMs;
      this.boardRead ??= this.readBoard(c, shards, nowMs).finally(() => {
        this.boardRead = undefined;
      });
    }
    await this.boardRead;
    return this.batchOfPayment.get(paymentId);
  }

  async batch(c: Collections, batchId: string, nowMs: number): Promise<BatchDoc | null> {
    const hit = this.batches.get(batchId);
    if (hit && (finished(hit.doc) || nowMs - hit.at < BATCH_TTL_MS)) return hit.doc;
    const doc = await findBatch(c, batchId);
    if (doc) this.keep(doc, nowMs);
    return doc;
  }

  private async readBoard(c: Collections, shards: number, nowMs: number): Promise<void> {
    const [announced, voids] = await Promise.all([announcedBatches(c, shards), recentVoids(c, new Date(nowMs))]);
    for (const id of voids) this.voided.set(id, true);
    const fresh = announced.filter((id) => !this.batches.get(id));
    const docs = await Promise.all(fresh.map((id) => findBatch(c, id)));
    for (const doc of docs) if (doc) this.keep(doc, nowMs);
  }

  private keep(doc: BatchDoc, nowMs: number): void {
    this.batches.set(doc._id, { doc, at: nowMs });
    for (const id of doc.paymentIds ?? []) this.batchOfPayment.set(id, doc._id);
  }
}
