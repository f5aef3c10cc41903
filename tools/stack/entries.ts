import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/paths.js';

/**
 * The Node entry of every process the stack starts, relative to the project root: the one place
 * the embedded stack, the cluster's replicas, the test helpers and temporal-compose.yml agree on
 * (test/unit/process-entries.test.ts checks each exists after `npm run build`).
 */
export const PROCESS_ENTRIES = {
  api: 'dist/src/main/api.js',
  worker: 'dist/workers/main.js',
} as const;

export type ProcessKind = keyof typeof PROCESS_ENTRIES;

/** The absolute path of a process's built entry; throws, naming the fix, when the build is missing. */
export function processEntry(kind: ProcessKind): string {
  return builtFile(PROCESS_ENTRIES[kind], `the ${kind}'s entry`);
}

/** The absolute path of a built file under the project root, or an error that says how to build it. */
export function builtFile(relativePath: string, what: string): string {
  const path = join(projectRoot(), relativePath);
  if (!existsSync(path)) throw new Error(`${path} (${what}) is missing: run npm run build`);
  return path;
}
