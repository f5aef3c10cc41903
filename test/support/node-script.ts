import { spawn, type ChildProcess } from 'node:child_process';

export interface ScriptRun {
  child: ChildProcess;
  /** stdout lines so far. */
  lines: string[];
  stderr: () => string;
  /** Resolves with the first stdout line matching `re` (rejects if the script ends first). */
  line(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves when the script ends, with its exit code. */
  exited: Promise<number | null>;
  stop(): void;
}

/** Runs `node <file>` in `cwd` with only PATH and `env`, handing each stdout line to `onLine`. */
export function runNodeScript(cwd: string, file: string, env: Record<string, string>, args: string[] = [], onLine: (line: string) => void = () => undefined): ScriptRun {
  const child = spawn(process.execPath, [file, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  let err = '';
  let partial = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.on('data', (d: Buffer) => {
    partial += d.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const l of parts) {
      lines.push(l);
      onLine(l);
      for (const w of waiters.filter((x) => x.re.test(l))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(l);
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    stderr: () => err,
    exited,
    line(re, timeoutMs = 60_000) {
      const seen = lines.find((l) => re.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${file}: no line ${re} in ${timeoutMs} ms; stderr: ${err.slice(-2000)}`)), timeoutMs);
        waiters.push({ re, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${file} exited (${code}) before ${re}; stdout: ${lines.join('\n').slice(-2000)}; stderr: ${err.slice(-2000)}`));
        });
      });
    },
    stop: () => void child.kill('SIGTERM'),
  };
}
