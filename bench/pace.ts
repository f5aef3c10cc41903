/**
 * The pace at which a level's payments settled, from its batches. Settlements come in batches, so
 * a count over a fixed window swings by a batch (a third of a 15 s window at 40/s), and the
 * payments settled by the end of a drain credit an overloaded level with the drain's seconds too.
 * Each shard settles one batch after another: a round's pace is its batch's payments over the time
 * since the shard's previous confirmation. A shard's pace is the median of its rounds' (the last
 * round after the arrivals stop holds only the remainder, and the first has no round before it),
 * and the level's pace is the sum over shards.
 */
import { median } from './stats.js';

export interface SettledBatch {
  shard: number;
  confirmedAtMs: number;
  /** The level's own payments in the batch. */
  payments: number;
}

/** Settled payments per second; null when a shard that settled the level's payments did so in fewer than two batches. */
export function batchPacePerSec(batches: readonly SettledBatch[]): number | null {
  const byShard = new Map<number, SettledBatch[]>();
  for (const b of batches) byShard.set(b.shard, [...(byShard.get(b.shard) ?? []), b]);
  if (byShard.size === 0) return null;
  let pace = 0;
  for (const shardBatches of byShard.values()) {
    const sorted = [...shardBatches].sort((a, b) => a.confirmedAtMs - b.confirmedAtMs);
    const rounds: number[] = [];
    for (let i = 1; i < sorted.length; i++) {
      const [before, batch] = [sorted[i - 1] as SettledBatch, sorted[i] as SettledBatch];
      if (batch.confirmedAtMs > before.confirmedAtMs) rounds.push(batch.payments / ((batch.confirmedAtMs - before.confirmedAtMs) / 1000));
    }
    if (rounds.length === 0) return null;
    pace += median(rounds);
  }
  return pace;
}
