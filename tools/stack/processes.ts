import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { createServer, connect } from 'node:net';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Quiet mode: append output to this file instead of the terminal. */
  logFile?: string;
  /** Signal sent first by stop(); SIGKILL follows after the timeout. */
  stopSignal?: NodeJS.Signals;
  /** Descriptors of ours the child inherits as its fds 3, 4, ... (each a duplicate). */
  inheritFds?: number[];
}

const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) p.killGroupNow('SIGKILL');
  });
}

/** A child in its own process group whose output is prefixed or logged, and which we alone may stop. */
export class ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string | undefined;
  readonly exited: Promise<ExitInfo>;
  private readonly child: ChildProcess;
  private readonly recent: string[] = [];
  private readonly lineListeners = new Set<(line: string, stream: 'stdout' | 'stderr') => void>();
  private readonly exitListeners = new Set<(info: ExitInfo) => void>();
  private exitInfo: ExitInfo | undefined;
  private expectingExit = false;
  private readonly log: WriteStream | undefined;
  private readonly stopSignal: NodeJS.Signals;

  constructor(opts: SpawnOptions) {
    this.name = opts.name;
    this.logFile = opts.logFile;
    if (opts.logFile) {
      mkdirSync(dirname(opts.logFile), { recursive: true });
      this.log = createWriteStream(opts.logFile, { flags: 'a' });
    }
    this.child = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', ...(opts.inheritFds ?? [])],
    });
    this.stopSignal = opts.stopSignal ?? 'SIGTERM';
    this.exited = new Promise<ExitInfo>((resolve) => {
      this.child.once('error', (err) => {
        this.onLine(`failed to start ${opts.command}: ${err.message}`, 'stderr');
        this.finish({ code: 127, signal: null }, resolve);
      });
      this.child.once('close', (code, signal) => this.finish({ code, signal }, resolve));
    });
    this.pid = this.child.pid ?? -1;
    if (this.pid > 0) {
      live.add(this);
      installExitHook();
    }
    for (const stream of ['stdout', 'stderr'] as const) {
      const source = this.child[stream];
      if (source) createInterface({ input: source, crlfDelay: Infinity }).on('line', (l) => this.onLine(l, stream));
    }
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  get exitStatus(): ExitInfo | undefined {
    return this.exitInfo;
  }

  /** The last lines of output, newest last. */
  tail(): string[] {
    return [...this.recent];
  }

  onLineOutput(listener: (line: string, stream: 'stdout' | 'stderr') => void): () => void {
    this.lineListeners.add(listener);
    return () => this.lineListeners.delete(listener);
  }

  /** Called when the process exits without stop() or kill() having been asked for. */
  onUnexpectedExit(listener: (info: ExitInfo) => void): void {
    this.exitListeners.add(listener);
  }

  waitForLine(match: string | RegExp, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const test = (l: string) => (typeof match === 'string' ? l.includes(match) : match.test(l));
    if (this.recent.some(test)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        off();
        signal?.removeEventListener('abort', onAbort);
      };
      const off = this.onLineOutput((l) => {
        if (test(l)) {
          cleanup();
          resolve();
        }
      });
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${this.name}: no line matching ${String(match)} within ${timeoutMs} ms`));
      }, timeoutMs);
      const onAbort = () => {
        cleanup();
        reject(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.exited.then((info) => {
        cleanup();
        reject(exitError(this, info));
      });
    });
  }

  /** Send a signal to the whole group; the resulting exit does not count as unexpected. */
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.expectingExit = true;
    this.killGroupNow(signal);
  }

  /** SIGTERM (or the configured stop signal) to the group, SIGKILL after timeoutMs. */
  async stop(timeoutMs = 10_000): Promise<ExitInfo> {
    if (this.exitInfo) return this.exitInfo;
    this.kill(this.stopSignal);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
    const first = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (first === 'timeout') this.killGroupNow('SIGKILL');
    return this.exited;
  }

  /** @internal */
  killGroupNow(signal: NodeJS.Signals): void {
    if (this.pid <= 0 || this.exitInfo) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }

  private onLine(line: string, stream: 'stdout' | 'stderr'): void {
    this.recent.push(line);
    if (this.recent.length > 200) this.recent.shift();
    if (this.log) this.log.write(line + '\n');
    else if (!this.expectingExit) (stream === 'stdout' ? process.stdout : process.stderr).write(`${this.name.padEnd(9)}| ${line}\n`);
    for (const l of this.lineListeners) l(line, stream);
  }

  private finish(info: ExitInfo, resolve: (i: ExitInfo) => void): void {
    if (this.exitInfo) return;
    this.exitInfo = info;
    live.delete(this);
    if (this.expectingExit) {
      try {
        process.kill(-this.pid, 'SIGKILL');
      } catch {
        /* no member of the group is left */
      }
    } else {
      for (const l of this.exitListeners) l(info);
    }
    // Resolve once the log file has every line, so a reader after the exit sees the last words.
    if (this.log) this.log.end(() => resolve(info));
    else resolve(info);
  }
}

export function spawnManaged(opts: SpawnOptions): ManagedProcess {
  return new ManagedProcess(opts);
}

export function describeExit(info: ExitInfo): string {
  return info.signal ? `signal ${info.signal}` : `code ${info.code}`;
}

function exitError(p: ManagedProcess, info: ExitInfo): Error {
  const tail = p.tail().slice(-20).join('\n');
  const where = p.logFile ? ` (log: ${p.logFile})` : '';
  return new Error(`${p.name} exited with ${describeExit(info)}${where}${tail ? `\n${tail}` : ''}`);
}

export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

export interface WaitOptions {
  what: string;
  timeoutMs: number;
  intervalMs?: number;
  proc?: ManagedProcess;
  signal?: AbortSignal;
}

/** Poll until probe() resolves true; fail fast when the process exits or the signal aborts. */
export async function waitUntil(probe: () => Promise<boolean>, opts: WaitOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (opts.signal?.aborted) throw abortError(opts.signal);
    const status = opts.proc?.exitStatus;
    if (status) throw exitError(opts.proc!, status);
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.what}${why}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
}

export function portOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function waitForPort(host: string, port: number, opts: Omit<WaitOptions, 'what'> & { what?: string }): Promise<void> {
  return waitUntil(() => portOpen(host, port), { what: `${host}:${port}`, ...opts });
}

export function waitForHttp(url: string, opts: Omit<WaitOptions, 'what'> & { what?: string }): Promise<void> {
  return waitUntil(
    async () => {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      return res.status === 200;
    },
    { what: url, ...opts },
  );
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      const addr = server.address();
      const bound = typeof addr === 'object' && addr ? addr.port : port;
      server.close(() => resolve(bound));
    });
  });
}

/** Ports below the kernel's ephemeral range (Linux's default starts at 32768, macOS's at 49152). */
const CHOSEN_PORT_FLOOR = 20_000;
const handedOut = new Set<number>();

function ephemeralFloor(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A port free now, for a child to listen on a moment later. It is chosen below the ephemeral range:
 * a port handed out by the kernel for `listen(0)` is free again once probed, and the Temporal dev
 * server binds several such ports for its internal services at start, so one of them could take
 * the port another child is about to use ("Address already in use"). Below the range only an
 * explicit bind can take it. Falls back to the kernel's choice where the range starts too low.
 */
export async function freePort(): Promise<number> {
  const ceiling = Math.min(ephemeralFloor(), 32_768);
  for (let attempt = 0; ceiling - CHOSEN_PORT_FLOOR > 1_000 && attempt < 50; attempt++) {
    const port = CHOSEN_PORT_FLOOR + Math.floor(Math.random() * (ceiling - CHOSEN_PORT_FLOOR));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    try {
      return await listenOnce(port);
    } catch {
      handedOut.delete(port); // taken by someone else: try another
    }
  }
  return listenOnce(0);
}

/** Throws a readable error when something already listens on 127.0.0.1:port. */
export async function assertPortFree(port: number, what: string): Promise<void> {
  try {
    await listenOnce(port);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`port ${port} for ${what} is not free (${code ?? String(err)}); is another stack running? Choose another port in the environment.`);
  }
}
