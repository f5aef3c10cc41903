import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const PACKAGES = ['wire', 'agent-client', 'x402-credit'] as const;
const OURS = '@credit-facilitator/';

interface PackEntry {
  name: string;
  filename: string;
  files: { path: string }[];
}

/** npm's environment without what `npm test` exported for this repository (workspace, prefix, scripts). */
export function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

/** `npm pack` of every package into `dir` (the build is already there); tarball path by package name. */
export async function packAll(dir: string): Promise<Record<string, string>> {
  const tarballs: Record<string, string> = {};
  for (const p of PACKAGES) {
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: join(REPO, 'packages', p), env: npmEnv() });
    const [packed] = JSON.parse(stdout) as PackEntry[];
    assert.ok(packed, `npm pack ${p}`);
    const stray = packed.files.map((f) => f.path).filter((f) => !/^dist\/.+\.(js|d\.ts|js\.map)$/.test(f) && !['README.md', 'LICENSE', 'package.json'].includes(f));
    assert.deepEqual(stray, [], `${p} ships only its build, README, LICENSE and package.json`);
    tarballs[packed.name] = join(dir, packed.filename);
  }
  return tarballs;
}

/**
 * A fresh copy of the empty project (test/fixtures/packed-project) where `npm install` runs with
 * exactly the README's arguments. Our packages are not on the registry, so their names resolve to
 * the tarballs: a named one directly, one pulled in by another (wire) through `overrides`, as if
 * it were published. Third-party packages come from the registry (its cache when it has them).
 */
export async function installAsReadmeSays(project: string, installs: string[][], tarballs: Record<string, string>): Promise<void> {
  mkdirSync(project, { recursive: true });
  copyFileSync(join(REPO, 'test/fixtures/packed-project/package.json'), join(project, 'package.json'));
  const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as Record<string, unknown>;
  // Only packages the README does not name: an override of a direct dependency must equal its spec.
  const named = new Set(installs.flat().filter((a) => a.startsWith(OURS)).map((a) => a.replace(/@[^@/]+$/, '')));
  const overrides = Object.fromEntries(Object.entries(tarballs).filter(([n]) => !named.has(n)).map(([n, t]) => [n, `file:${t}`]));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ ...pkg, overrides }, null, 2));
  for (const args of installs) {
    const specs = args.map((a) => {
      if (!a.startsWith(OURS)) return a;
      const name = a.replace(/@[^@/]+$/, '');
      assert.ok(tarballs[name], `the README installs ${a}, which is none of the packed packages`);
      return tarballs[name]!;
    });
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', ...specs], { cwd: project, env: npmEnv(), timeout: 240_000 });
  }
}
