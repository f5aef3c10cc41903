import type { Collections } from '../store/collections.js';
import type { BatchDoc, PaymentDoc } from '../store/documents.js';
import { findBatch, findBatches, isFinishedBatch } from '../store/settlement/batches.js';
import { SettlementBoardReader, type BoardSnapshot, type BoardSource } from './settlement-board.js';
import { Lru } from '@credit-facilitator/wire/lru';
import { batchesToRead, keptBatchIsCurrent, type KeptBatch } from '../domain/batch-board.js';

const BATCH_TTL_MS = 250;
/** An unfinished batch the board versions is read again after this even at the same version (see keptBatchIsCurrent). */
const BATCH_RECHECK_MS = 5_000;
const BATCH_TRUST = { ttlMs: BATCH_TTL_MS, recheckMs: BATCH_RECHECK_MS };
const BOARD_TTL_MS = 250;
const CLAIM_RECHECK_MS = 5_000;

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

/**
 * API processes' clocks may differ by this much (NTP keeps them far closer): a payment captured
 * less than this after the refund board's window began is treated as older than the window.
 */
const CLOCK_SKEW_MS = 5_000;

/**
 * What status polls remember between polls in one API process, so a poll costs about one store
 * read (the merchant's credential) whatever the number of pending payments: facts that never
 * change once seen (a payment's capture fields, that it was accepted, the batch it rides in, a
 * finished batch), and the shards' board (read at most every BOARD_TTL_MS in one command shared
 * with capture admission: the announced batches with each one's record version, the recent voids
 * and refunds). An unfinished batch's record is read when it is first announced and again when
 * the board shows it at a new version (all such batches of one board in one read) or every
 * BATCH_RECHECK_MS, whatever the number of polls; a batch the board gives no version is read again
 * after BATCH_TTL_MS. A poll lags its batch's recorded state, a void or a refund made by another
 * API process by at most BOARD_TTL_MS (plus the board write's and read's round trips). While
 * workers of the release before versions still run, one of them may write a batch's record (a
 * confirmation, an end) without a new version: a poll then shows it up to BATCH_RECHECK_MS late.
 */
export class PaymentStatusCache {
  readonly payments: Lru<PaymentDoc>;
  readonly accepted: Lru<true>;
  private readonly batchOfPayment: Lru<string>;
  private readonly batches: Lru<KeptBatch & { doc: BatchDoc }>;
  private readonly voided: Lru<true>;
  private readonly refunded: Lru<true>;
  private readonly claimLookedUpAt: Lru<number>;
  private absorbed: BoardSnapshot | undefined;
  private absorbing: Promise<void> | undefined;

  constructor(
    sizes: StatusCacheSizes = DEFAULT_STATUS_CACHE_SIZES,
    private board?: BoardSource,
  ) {
    this.payments = new Lru(sizes.payments);
    this.accepted = new Lru(sizes.payments);
    this.batchOfPayment = new Lru(sizes.payments);
    this.batches = new Lru(sizes.batches);
    this.voided = new Lru(sizes.payments);
    this.refunded = new Lru(sizes.payments);
    this.claimLookedUpAt = new Lru(sizes.payments);
  }

  /** Whether the board says this payment was voided (recently, by any API process). */
  async wasVoided(c: Collections, shards: number, paymentId: string, nowMs: number): Promise<boolean> {
    if (!this.voided.get(paymentId)) await this.batchOf(c, shards, paymentId, nowMs);
    return this.voided.get(paymentId) === true;
  }

  /**
   * Whether a poll must read this payment's refunds. No, when the board's window holds the whole
   * life of the payment and names no refund of it: a refund is announced before it is recorded, so
   * one recorded before the board was read is on it. Yes for a payment older than the window.
   */
  async mayHaveRefunds(c: Collections, shards: number, doc: Pick<PaymentDoc, '_id' | 'capturedAt'>, nowMs: number): Promise<boolean> {
    if (this.refunded.get(doc._id)) return true;
    const board = await this.freshBoard(c, shards, nowMs);
    if (!(doc.capturedAt.getTime() >= board.coversSinceMs + CLOCK_SKEW_MS)) return true;
    return board.refunds.has(doc._id);
  }

  /** A refund this process is about to record: its polls here read the refunds at once, without waiting for the board. */
  rememberRefund(paymentId: string): void {
    this.refunded.set(paymentId, true);
  }

  /** A capture this process accepted: its polls here need not read the payment or its spend intent's fate. */
  rememberAccepted(doc: PaymentDoc): void {
    this.payments.set(doc._id, doc);
    this.accepted.set(doc._id, true);
  }

  /**
   * Whether a poll may look this payment's claim up now: at most once every CLAIM_RECHECK_MS per
   * payment, so a payment left waiting in a backlog costs a claim read every few seconds, not every
   * poll. A claim found late shows at most that much later.
   */
  mayLookUpClaim(paymentId: string, nowMs: number): boolean {
    const last = this.claimLookedUpAt.get(paymentId);
    if (last !== undefined && nowMs - last < CLAIM_RECHECK_MS) return false;
    this.claimLookedUpAt.set(paymentId, nowMs);
    return true;
  }

  rememberBatchOf(paymentId: string, batchId: string): void {
    this.batchOfPayment.set(paymentId, batchId);
  }

  /** The batch a payment rides in, as far as the shards have announced; undefined while it waits. */
  async batchOf(c: Collections, shards: number, paymentId: string, nowMs: number): Promise<string | undefined> {
    const known = this.batchOfPayment.get(paymentId);
    if (known) return known;
    await this.freshBoard(c, shards, nowMs);
    return this.batchOfPayment.get(paymentId);
  }

  /**
   * A batch's record as polls may answer it: a finished one as kept; an unfinished one as kept if
   * read less than BATCH_TTL_MS ago, or at the version the board (at most BOARD_TTL_MS old) shows
   * less than BATCH_RECHECK_MS ago, else read again (a batch the board gives no version: every
   * BATCH_TTL_MS). A batch not kept here is read at once.
   */
  async batch(c: Collections, shards: number, batchId: string, nowMs: number): Promise<BatchDoc | null> {
    const hit = this.batches.get(batchId);
    if (hit && keptBatchIsCurrent(hit, undefined, nowMs, BATCH_TRUST)) return hit.doc;
    let version: string | undefined;
    if (hit) {
      version = (await this.freshBoard(c, shards, nowMs)).batchVersions.get(batchId);
      const kept = this.batches.get(batchId); // taking the board in may have read it again
      if (kept && keptBatchIsCurrent(kept, version, nowMs, BATCH_TRUST)) return kept.doc;
    }
    const doc = await findBatch(c, batchId);
    if (doc) this.keep(doc, nowMs, version);
    return doc;
  }

  /** Takes in the board if the copy here is more than BOARD_TTL_MS old (one read, shared with polls). */
  async refresh(c: Collections, shards: number, nowMs: number): Promise<void> {
    await this.freshBoard(c, shards, nowMs);
  }

  /**
   * What this process knows of a payment's settlement, as a token that changes whenever a poll's
   * answer for it may have: the batch it rides in, that batch's kept record (status, board version)
   * and a void. No store read; long polls compare it after each refresh (status-waiters.ts).
   */
  settlementSignal(paymentId: string): string {
    const batchId = this.batchOfPayment.peek(paymentId);
    const kept = batchId === undefined ? undefined : this.batches.peek(batchId);
    return [batchId ?? '', kept?.doc.status ?? '', kept?.version ?? '', this.voided.peek(paymentId) ? 'voided' : ''].join('|');
  }

  /** The board at most BOARD_TTL_MS old, with what it says taken in (new batches fetched in one read). */
  private async freshBoard(c: Collections, shards: number, nowMs: number): Promise<BoardSnapshot> {
    this.board ??= new SettlementBoardReader(c, shards);
    const board = await this.board.read(nowMs, BOARD_TTL_MS);
    if (board !== this.absorbed) {
      this.absorbed = board;
      this.absorbing = this.absorb(c, board).catch((err: unknown) => {
        if (this.absorbed === board) this.absorbed = undefined; // the next poll tries again
        throw err;
      });
    }
    await this.absorbing;
    return board;
  }

  /** Takes a board in: its voids, and in one read every listed batch new here or at a new version. */
  private async absorb(c: Collections, board: BoardSnapshot): Promise<void> {
    for (const id of board.voids) this.voided.set(id, true);
    const stale = batchesToRead(board.batchIds, board.batchVersions, (id) => this.batches.get(id));
    // The board was read before the records: each is at least as new as the version it is kept with.
    for (const doc of await findBatches(c, stale)) this.keep(doc, board.readAtMs, board.batchVersions.get(doc._id));
  }

  private keep(doc: BatchDoc, nowMs: number, version: string | undefined): void {
    this.batches.set(doc._id, { doc, finished: isFinishedBatch(doc.status), atMs: nowMs, ...(version === undefined ? {} : { version }) });
    for (const id of doc.paymentIds ?? []) this.batchOfPayment.set(id, doc._id);
  }
}
