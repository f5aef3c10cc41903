import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

interface ProcStat {
  ppid: number;
  /** utime + stime + cutime + cstime, in ticks: its own and its reaped children's. */
  ticks: number;
}

function procStat(pid: number | string): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) };
  } catch {
    return undefined;
  }
}

/** Every live process's parent and ticks, read once from /proc. */
function processTable(): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  let names: string[] = [];
  try {
    names = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return table;
  }
  for (const n of names) {
    const s = procStat(n);
    if (s) table.set(Number(n), s);
  }
  return table;
}

/**
 * CPU seconds (user + system) a process and its descendants have used so far, from /proc; NaN
 * where /proc is not available. PostgreSQL serves each connection from a process of its own, forked
 * by the postmaster: the live ones are found by parent pid, the exited ones are in the parent's
 * cutime/cstime once reaped, so the sum only grows while the tree lives.
 */
function treeSeconds(pid: number, table: Map<number, ProcStat>): number {
  const own = table.get(pid) ?? procStat(pid);
  if (!own) return Number.NaN;
  let ticks = own.ticks;
  const pending = [pid];
  while (pending.length > 0) {
    const parent = pending.pop()!;
    for (const [child, s] of table) {
      if (s.ppid !== parent) continue;
      ticks += s.ticks;
      pending.push(child);
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** CPU seconds a process and its descendants have used so far (see treeSeconds). */
export function cpuSeconds(pid: number): number {
  return treeSeconds(pid, processTable());
}

export type CpuSnapshot = Map<string, number>;

export function snapshot(processes: readonly { name: string; pid: number }[]): CpuSnapshot {
  const table = processTable();
  return new Map(processes.map((p) => [p.name, treeSeconds(p.pid, table)]));
}

/** CPU seconds each process (with its descendants) spent between two snapshots. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): Map<string, number> {
  return new Map([...after].map(([name, s]) => [name, s - (before.get(name) ?? Number.NaN)]));
}
