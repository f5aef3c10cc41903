import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { abortError } from './processes.js';
import { findOnPath } from './which.js';

/** `tags`: build tags for an install (e.g. to leave out parts of a large module). */
export type GoTarget = { kind: 'install'; pkg: string; tags?: string[] } | { kind: 'build'; dir: string };

export interface GoBuildSpec {
  label: string;
  /** Where the finished binary must end up. */
  output: string;
  target: GoTarget;
  /** Shown once before building, e.g. "first run only, takes a few minutes". */
  expectation: string;
}

export interface GoCommand {
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  produced: string;
}

/** The go invocation that writes the binary into tmpDir (never straight to the final path). */
export function goCommand(spec: GoBuildSpec, tmpDir: string, modMod = false): GoCommand {
  const env: Record<string, string> = {};
  if (modMod) env.GOFLAGS = `${process.env.GOFLAGS ?? ''} -mod=mod`.trim();
  if (spec.target.kind === 'install') {
    const name = spec.target.pkg.split('@')[0]!.split('/').pop()!;
    const tags = spec.target.tags?.length ? ['-tags', spec.target.tags.join(',')] : [];
    return { args: ['install', ...tags, spec.target.pkg], cwd: tmpDir, env: { ...env, GOBIN: tmpDir }, produced: join(tmpDir, name) };
  }
  const produced = join(tmpDir, basename(spec.output));
  return { args: ['build', '-o', produced, '.'], cwd: spec.target.dir, env, produced };
}

export function goToolchain(): string {
  const found = findOnPath('go') ?? (existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!found) throw new Error('the Go toolchain (go) is needed once to build dev tools; install Go 1.22+ or put it on PATH');
  return found;
}

const NEEDS_MOD_MOD = /missing go\.sum entry|updates to go\.mod needed|go: updates to go\.sum needed/;

function runGo(go: string, cmd: GoCommand, logPath: string, label: string, log: (m: string) => void, signal?: AbortSignal): Promise<number> {
  const fd = openSync(logPath, 'a');
  const started = Date.now();
  const child = spawn(go, cmd.args, { cwd: cmd.cwd, env: { ...process.env, ...cmd.env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const ticker = setInterval(() => log(`  still building ${label} (${Math.round((Date.now() - started) / 1000)} s)`), 15_000);
  const onAbort = () => child.kill('SIGTERM');
  signal?.addEventListener('abort', onAbort, { once: true });
  return new Promise<number>((resolve) => {
    child.once('error', () => resolve(127));
    child.once('close', (code) => resolve(code ?? 1));
  }).finally(() => {
    clearInterval(ticker);
    signal?.removeEventListener('abort', onAbort);
  });
}

/** Build with go into a temp dir and rename into place, so a killed build never leaves a half binary. */
export async function goBuild(spec: GoBuildSpec, log: (m: string) => void, signal?: AbortSignal): Promise<string> {
  const go = goToolchain();
  const binDir = dirname(spec.output);
  const logPath = join(dirname(binDir), 'logs', `${basename(spec.output)}.build.log`);
  mkdirSync(dirname(logPath), { recursive: true });
  const tmpDir = mkdtempSync(join(binDir, '.build-'));
  log(`building ${spec.label} with go (${spec.expectation}); log: ${logPath}`);
  const started = Date.now();
  try {
    let cmd = goCommand(spec, tmpDir);
    let code = await runGo(go, cmd, logPath, spec.label, log, signal);
    if (code !== 0 && NEEDS_MOD_MOD.test(readFileSync(logPath, 'utf8'))) {
      log(`  retrying ${spec.label} with GOFLAGS=-mod=mod`);
      cmd = goCommand(spec, tmpDir, true);
      code = await runGo(go, cmd, logPath, spec.label, log, signal);
    }
    if (signal?.aborted) throw abortError(signal);
    if (code !== 0 || !existsSync(cmd.produced)) {
      const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-30).join('\n');
      throw new Error(`building ${spec.label} failed (go ${cmd.args.join(' ')}, exit ${code}):\n${tail}`);
    }
    chmodSync(cmd.produced, 0o755);
    renameSync(cmd.produced, spec.output);
    log(`built ${spec.label} in ${Math.round((Date.now() - started) / 1000)} s -> ${spec.output}`);
    return spec.output;
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
}
