import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { projectRoot, toolsCacheDir } from '../config/paths.js';
import { goBuild } from './gobuild.js';
import { withFileLock } from './lock.js';
import { findOnPath, isExecutable } from './which.js';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

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

async function cachedOrBuilt(output: string, build: () => Promise<string>, ctx: BuildContext): Promise<string> {
  if (isExecutable(output)) return output;
  mkdirSync(dirname(output), { recursive: true });
  return withFileLock(
    `${output}.lock`,
    async () => (isExecutable(output) ? output : build()),
    (pid, waited) => ctx.log(`waiting for another build of ${output} (pid ${pid ?? '?'}, ${Math.round(waited / 1000)} s)`),
    ctx.signal,
  );
}

/** $TEMPORAL_CLI_PATH, then temporal on PATH, then the tools cache, else build it with go install. */
export async function resolveTemporal(opts: BuildContext & { cliPath?: string | undefined }): Promise<string> {
  if (opts.cliPath) {
    if (!isExecutable(opts.cliPath)) throw new Error(`TEMPORAL_CLI_PATH=${opts.cliPath} is not an executable file`);
    return opts.cliPath;
  }
  const onPath = findOnPath('temporal');
  if (onPath) return onPath;
  const output = join(toolsBinDir(), 'temporal');
  return cachedOrBuilt(
    output,
    () =>
      goBuild(
        { label: 'the Temporal CLI v1.5.1', output, target: { kind: 'install', pkg: TEMPORAL_CLI_MODULE }, expectation: 'first run only, takes several minutes' },
        opts.log,
        opts.signal,
      ),
    opts,
  );
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
