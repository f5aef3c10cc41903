import type { Collections } from '../store/collections.js';
import { readSettlementBoard, type SettlementBoard } from '../store/settlement/board.js';

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
