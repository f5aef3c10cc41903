import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface BlockRun {
  /** Every block finished and the shell exited 0. */
  ok: boolean;
  /** The index of the block that failed (or was running at the timeout). */
  failedBlock?: number;
  /** Why it failed: the exit code and command, or the timeout. */
  failure?: string;
  /** What each block printed (stdout and stderr together), by index, as far as it got. */
  outputs: string[];
}

export interface BashSession {
  run(): Promise<BlockRun>;
  /** Everything the session and what it left running printed so far (background jobs keep printing). */
  log(): string;
  /** Stops the shell and whatever it started in the background (its process group), then removes its scripts. */
  stop(): Promise<void>;
}

/**
 * Runs `blocks` in order in one `bash -euo pipefail` in `cwd`, as a reader pasting them into one
 * terminal would: variables and background jobs carry from one block to the next. The shell leads a
 * process group of its own, so stop() also ends the jobs a block left running.
 */
export function bashSession(blocks: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): BashSession {
  const dir = mkdtempSync(join(tmpdir(), 'cf-bash-'));
  const mark = `::block-${randomBytes(6).toString('hex')}`;
  const logFile = join(dir, 'session.log');
  const driver = [
    `trap 'rc=$?; printf "\\n${mark} failed (exit %d): %s\\n" "$rc" "$BASH_COMMAND"' ERR`,
    ...blocks.flatMap((text, i) => {
      writeFileSync(join(dir, `block-${i}.sh`), text);
      return [`printf '\\n${mark} start ${i}\\n'`, `source ${JSON.stringify(join(dir, `block-${i}.sh`))}`];
    }),
    `printf '\\n${mark} done\\n'`,
  ].join('\n');
  writeFileSync(join(dir, 'driver.sh'), driver + '\n');
  let pid: number | undefined;
  const log = () => readFileSync(logFile, 'utf8');

  const run = async (): Promise<BlockRun> => {
    const fd = openSync(logFile, 'a');
    const child = spawn('bash', ['-euo', 'pipefail', join(dir, 'driver.sh')], { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    pid = child.pid;
    const code = await new Promise<number | null | 'timeout'>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), opts.timeoutMs);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    const text = log();
    const outputs: string[] = [];
    let failure: string | undefined;
    let done = false;
    for (const part of text.split(`\n${mark} `).slice(1)) {
      const [head = '', ...rest] = part.split('\n');
      if (head.startsWith('start ')) outputs.push(rest.join('\n'));
      else if (head === 'done') done = true;
      else if (head.startsWith('failed')) failure = head;
    }
    if (code === 'timeout') failure = `still running after ${opts.timeoutMs / 1000} s`;
    else if (code !== 0 && !failure) failure = `the shell exited with ${code}`;
    const ok = code === 0 && done;
    return { ok, outputs, ...(ok ? {} : { failedBlock: Math.max(0, outputs.length - 1), failure: failure ?? 'the shell stopped before the last block' }) };
  };

  const stop = async () => {
    if (pid !== undefined) {
      const group = -pid;
      signal(group, 'SIGTERM');
      const deadline = Date.now() + 5_000;
      while (alive(group) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      signal(group, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };

  return { run, log, stop };
}

function signal(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

function alive(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch {
    return false;
  }
}
