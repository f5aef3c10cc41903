/** Batch ends remembered for pacing; a notification that ran on another worker leaves its entry behind. */
const MAX_ENDED = 64;

/**
 * How long each batch's payment-workflow signals are spread over (notifyPayments). A shard ends its
 * next batch only once the previous batch's signals are out (workflows/settlement-shard.ts), so a
 * fixed spread longer than the shard's own round holds every round to the spread, and payments wait
 * in the queue for it. Each batch's signals are spread instead over the time the shard took from
 * the start of its previous batch's signals to the end of this batch (the round's own work), never
 * more than `maxSpreadMs`: the signals go out about as fast as payments settle, evenly, without
 * holding the next round. Without both times at hand (the first batch, a notification on another
 * worker, after a restart) the spread is `maxSpreadMs`, as before.
 */
export class NotifyPace {
  private readonly startedMs = new Map<number, number>();
  private readonly endedMs = new Map<string, number>();

  constructor(private readonly maxSpreadMs: number) {}

  /** The batch's end (everything but its signals) finished at `nowMs`. */
  ended(batchId: string, nowMs: number): void {
    this.endedMs.set(batchId, nowMs);
    for (const old of this.endedMs.keys()) {
      if (this.endedMs.size <= MAX_ENDED) break;
      this.endedMs.delete(old);
    }
  }

  /** The spread for the batch whose signals start now, on `shard`. */
  spreadMs(shard: number, batchId: string, nowMs: number): number {
    const previousStart = this.startedMs.get(shard);
    const end = this.endedMs.get(batchId);
    this.startedMs.set(shard, nowMs);
    this.endedMs.delete(batchId);
    if (previousStart === undefined || end === undefined || end < previousStart) return this.maxSpreadMs;
    return Math.min(this.maxSpreadMs, end - previousStart);
  }
}
