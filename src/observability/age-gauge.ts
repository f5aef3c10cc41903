import { Gauge, type Registry } from 'prom-client';

/**
 * A gauge of how long something has been so, per key (a shard): the start time is kept, and the
 * age is worked out when scraped, so it keeps growing while nothing updates it (a stalled shard,
 * a store that does not answer the sampler). A key without a start reads 0. With `staleAfterMs`, a
 * start not confirmed (begin) for that long reads 0: another process took the work over.
 */
export class AgeGauge {
  private readonly starts = new Map<string, { at: number; seen: number }>();
  private readonly keys = new Set<string>();

  constructor(registry: Registry, opts: { name: string; help: string; label: string; staleAfterMs?: number }) {
    const { starts, keys } = this;
    const staleAfterMs = opts.staleAfterMs ?? Infinity;
    new Gauge({
      name: opts.name,
      help: opts.help,
      labelNames: [opts.label],
      registers: [registry],
      collect() {
        const now = Date.now();
        for (const key of keys) {
          const s = starts.get(key);
          this.set({ [opts.label]: key }, s && now - s.seen <= staleAfterMs ? Math.max(0, now - s.at) / 1000 : 0);
        }
      },
    });
  }

  /** The series exists (at 0) from now on. */
  track(key: string): void {
    this.keys.add(key);
  }

  /** Sets the start exactly (undefined: nothing is waiting). */
  set(key: string, atMs: number | undefined, nowMs = Date.now()): void {
    this.keys.add(key);
    if (atMs === undefined) this.starts.delete(key);
    else this.starts.set(key, { at: atMs, seen: nowMs });
  }

  /** Starts the clock unless it runs, and confirms it runs. */
  begin(key: string, nowMs = Date.now()): void {
    this.keys.add(key);
    const s = this.starts.get(key);
    if (s) s.seen = nowMs;
    else this.starts.set(key, { at: nowMs, seen: nowMs });
  }

  /** Confirms a running clock still runs; does not start one. */
  touch(key: string, nowMs = Date.now()): void {
    const s = this.starts.get(key);
    if (s) s.seen = nowMs;
  }

  clear(key: string): void {
    this.starts.delete(key);
  }
}
