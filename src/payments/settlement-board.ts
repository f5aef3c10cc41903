import type { Collections } from '../store/collections.js';
import { readSettlementBoard, type SettlementBoard } from '../store/settlement/board.js';
import { countQueued } from '../store/settlement/queue.js';

/** A board as read at `readAtMs` (this process's clock). */
export interface BoardSnapshot extends SettlementBoard {
  readAtMs: number;
}

/** Where a process takes board snapshots from. */
export interface BoardSource {
  read(nowMs: number, maxAgeMs: number): Promise<BoardSnapshot>;
}

/**
 * The shards' board as one API process sees it: one read (one store command) serves every reader
 * in the process that accepts its age, i.e. status polls (PaymentStatusCache, at most BOARD_TTL_MS
 * old) and capture admission (the settlement backlog, at most a second old). Concurrent readers
 * share the read in flight.
 */
export class SettlementBoardReader implements BoardSource {
  private latest: BoardSnapshot | undefined;
  private reading: Promise<BoardSnapshot> | undefined;

  constructor(
    private readonly c: Collections,
    private readonly shards: number,
  ) {}

  /**
   * The settlement backlog admission holds captures against: the shards' reports, and for a shard
   * whose report went stale with a queue (stuck in a step, or no worker) its queue counted here, so
   * the bound holds whatever settlement is doing (a few count commands a second, only then).
   */
  async backlog(nowMs: number, maxAgeMs: number): Promise<number> {
    const board = await this.read(nowMs, maxAgeMs);
    if (board.staleShards.length === 0) return board.backlog;
    const reportedFresh = board.backlog - board.staleShards.reduce((sum, i) => sum + (board.pendingByShard[i] ?? 0), 0);
    return reportedFresh + (await countQueued(this.c, board.staleShards));
  }

  /** A snapshot read at most maxAgeMs before nowMs (or one read now). */
  async read(nowMs: number, maxAgeMs: number): Promise<BoardSnapshot> {
    if (this.latest && nowMs - this.latest.readAtMs < maxAgeMs) return this.latest;
    this.reading ??= readSettlementBoard(this.c, this.shards, new Date(nowMs))
      .then((board) => {
        this.latest = { ...board, readAtMs: nowMs };
        return this.latest;
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}
