import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository root, found by walking up from this file to the nearest package.json. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export function dataDir(configured: string): string {
  return resolve(projectRoot(), configured);
}

/** Per-user cache for built tools, shared by every clone on the machine (CI reuses it). */
export function toolsCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME && process.env.XDG_CACHE_HOME !== '' ? process.env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'credit-facilitator');
}
