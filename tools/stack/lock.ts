import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holderOf(lockPath: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function tryAcquire(lockPath: string): boolean {
  try {
    const fd = openSync(lockPath, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  }
}

function isStale(lockPath: string): boolean {
  const pid = holderOf(lockPath);
  if (pid !== undefined) return !pidAlive(pid);
  try {
    return Date.now() - statSync(lockPath).mtimeMs > 10_000;
  } catch {
    return true;
  }
}

/** Run fn while holding an exclusive lock file (pid inside); a lock whose holder died is taken over. */
export async function withFileLock<T>(
  lockPath: string,
  fn: () => Promise<T>,
  onWait?: (holderPid: number | undefined, waitedMs: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  const started = Date.now();
  let lastNotice: number | undefined;
  while (!tryAcquire(lockPath)) {
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
    if (isStale(lockPath)) {
      try {
        unlinkSync(lockPath);
      } catch {
        /* someone else removed it */
      }
      continue;
    }
    if (lastNotice === undefined || Date.now() - lastNotice >= 15_000) {
      onWait?.(holderOf(lockPath), Date.now() - started);
      lastNotice = Date.now();
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const release = () => {
    try {
      if (holderOf(lockPath) === process.pid) unlinkSync(lockPath);
    } catch {
      /* already gone */
    }
  };
  process.once('exit', release);
  try {
    return await fn();
  } finally {
    process.removeListener('exit', release);
    release();
  }
}
