import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far, from /proc; NaN where /proc is not available. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

export type CpuSnapshot = Map<string, number>;

export function snapshot(processes: readonly { name: string; pid: number }[]): CpuSnapshot {
  return new Map(processes.map((p) => [p.name, cpuSeconds(p.pid)]));
}

/** CPU seconds each process spent between two snapshots. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): Map<string, number> {
  return new Map([...after].map(([name, s]) => [name, s - (before.get(name) ?? Number.NaN)]));
}
