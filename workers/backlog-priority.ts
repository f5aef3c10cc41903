import { writeFileSync } from 'node:fs';

export interface BacklogPriorityOptions {
  /** The niceness the worker yields at (WORKER_CPU_NICE). */
  nice: number;
  /** Payments waiting across this worker's shards at which settlement takes the CPU back (WORKER_CPU_NICE_BACKLOG). */
  boostAt: number;
  /** Sets the worker's autogroup niceness (a test passes a stand-in). */
  setGroupNice?: (nice: number) => void;
  log: (msg: string, fields: Record<string, unknown>) => void;
}

const setOwnAutogroupNice = (nice: number) => writeFileSync('/proc/self/autogroup', String(nice));

/**
 * Settlement yields the CPU to the request path (cpu-priority.ts), but the traffic that waits for
 * settlement (merchants polling a growing backlog) must not starve it: once `boostAt` payments wait
 * in the shards this worker serves, its autogroup goes back to niceness 0, and back to `nice` once
 * fewer than half of that wait. Taking priority back needs CAP_SYS_NICE or an RLIMIT_NICE that
 * allows it; where the platform refuses, the worker says so once and stays as it is.
 */
export class BacklogPriority {
  private readonly pending = new Map<number, number>();
  private boosted = false;
  private refused = false;

  constructor(private readonly o: BacklogPriorityOptions) {}

  observe(shard: number, waiting: number): void {
    this.pending.set(shard, waiting);
    if (this.refused || this.o.boostAt <= 0 || this.o.nice <= 0) return;
    const total = [...this.pending.values()].reduce((a, b) => a + b, 0);
    if (!this.boosted && total >= this.o.boostAt) this.set(0, total);
    else if (this.boosted && total < this.o.boostAt / 2) this.set(this.o.nice, total);
  }

  private set(nice: number, waiting: number): void {
    try {
      (this.o.setGroupNice ?? setOwnAutogroupNice)(nice);
      this.boosted = nice === 0;
      this.o.log(this.boosted ? 'settlement backlog: worker CPU priority back to normal' : 'settlement backlog drained: worker CPU priority lowered again', { nice, waiting, boostAt: this.o.boostAt });
    } catch (err) {
      this.refused = true;
      this.o.log('settlement backlog: the worker cannot take its CPU priority back (needs CAP_SYS_NICE or RLIMIT_NICE)', { waiting, error: (err as Error).message });
    }
  }
}
