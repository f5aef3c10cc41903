import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** What lowering the worker's priority did: to its autogroup (the whole process), its threads only, or nothing. */
export interface PriorityOutcome {
  nice: number;
  scope: 'autogroup' | 'threads' | 'none';
  /** Why the scope is narrower than the autogroup, when it is. */
  reason?: string;
}

export interface PriorityHost {
  /** Where /proc/self is (a test points it elsewhere). */
  procSelf: string;
  pid: number;
  /** The niceness of thread `tid`. */
  threadNice(tid: number): number;
  /** setpriority(2) of thread `tid`: the threads it starts later inherit the value. */
  setThreadNice(tid: number, nice: number): void;
}

const realHost: PriorityHost = { procSelf: '/proc/self', pid: process.pid, threadNice: (tid) => getPriority(tid), setThreadNice: (tid, nice) => setPriority(tid, nice) };

/** The process's threads: every entry of /proc/self/task, or only the calling one where there is none. */
function threadsOf(host: PriorityHost): number[] {
  const tasks = `${host.procSelf}/task`;
  return existsSync(tasks) ? readdirSync(tasks).map(Number).filter(Number.isInteger) : [0];
}

/** Lowers one thread unless it already runs lower; a thread that ended meanwhile (ESRCH) is passed over. */
function lowerThread(host: PriorityHost, tid: number, nice: number): void {
  try {
    if (host.threadNice(tid) < nice) host.setThreadNice(tid, nice);
  } catch (err) {
    if ((err as { info?: { code?: string } }).info?.code !== 'ESRCH' && (err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** The niceness in a /proc/<pid>/autogroup line (`/autogroup-42 nice 0`). */
export function autogroupNiceOf(line: string): number {
  const m = /nice\s+(-?\d+)/.exec(line);
  return m ? Number(m[1]) : 0;
}

/** The session id in a /proc/<pid>/stat line (the sixth field; the command name in parentheses may hold spaces). */
export function sessionOf(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[3]);
}

/**
 * Lowers the worker's CPU priority to `nice`, so that on a shared box the request path (API, store,
 * Temporal) runs first and settlement takes the cycles left over. With the kernel's autogroup
 * scheduling (the default of most distributions) a niceness orders threads only within their
 * session's group, so the group's own niceness is what counts against the other processes; it is
 * set only when the worker leads its session, as `npm start` and the stack's supervisor start it,
 * because otherwise the group is shared with whatever started it. Each thread's own niceness is set
 * either way (what counts without autogroups), and the threads started later (Temporal's core, the
 * workflow threads) inherit it.
 * Raising a niceness needs no privilege; nothing here ever lowers one.
 */
export function lowerCpuPriority(nice: number, host: PriorityHost = realHost): PriorityOutcome {
  if (nice <= 0) return { nice: 0, scope: 'none' };
  try {
    for (const tid of threadsOf(host)) lowerThread(host, tid, nice);
  } catch (err) {
    return { nice: 0, scope: 'none', reason: `setpriority failed: ${(err as Error).message}` };
  }
  const autogroup = `${host.procSelf}/autogroup`;
  if (!existsSync(autogroup)) return { nice, scope: 'threads', reason: 'no autogroup scheduling on this kernel' };
  const session = sessionOf(readFileSync(`${host.procSelf}/stat`, 'utf8'));
  if (session !== host.pid) return { nice, scope: 'threads', reason: `the worker does not lead its session (${session}), whose autogroup it would lower for every process in it` };
  try {
    if (autogroupNiceOf(readFileSync(autogroup, 'utf8')) < nice) writeFileSync(autogroup, String(nice));
    return { nice, scope: 'autogroup' };
  } catch (err) {
    return { nice, scope: 'threads', reason: `autogroup not writable: ${(err as Error).message}` };
  }
}
