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

/**
 * V8 flags every API and worker starts with, before its entry (Node refuses them in NODE_OPTIONS).
 *
 * `--no-memory-reducer`: when a process goes quiet, V8's memory reducer runs full collections to
 * shrink its heap, and those clear the maps and objects that optimized code had embedded, so V8
 * throws that code away (`--trace-deopt`: ~350 functions after a minute idle, from the BSON
 * writer to the voucher parser). The first 10-20 s of traffic after a quiet spell then ran
 * half-interpreted: 1.5-1.6x the API's CPU per payment and 1.3-1.5x the capture median
 * (docs/scaling.md, issue 45, 2026-11-29). Without it an idle process keeps the heap its load
 * grew (the API ~370 MiB resident instead of ~225-255 after a minute idle); collections under load
 * are unchanged.
 */
export const PROCESS_V8_FLAGS: readonly string[] = ['--no-memory-reducer'];

/** The absolute path of a process's built entry; throws, naming the fix, when the build is missing. */
export function processEntry(kind: ProcessKind): string {
  return builtFile(PROCESS_ENTRIES[kind], `the ${kind}'s entry`);
}

/** The arguments that start a process with `node`: its V8 flags, then its built entry. */
export function processArgs(kind: ProcessKind): string[] {
  return [...PROCESS_V8_FLAGS, processEntry(kind)];
}

/** The absolute path of a built file under the project root, or an error that says how to build it. */
export function builtFile(relativePath: string, what: string): string {
  const path = join(projectRoot(), relativePath);
  if (!existsSync(path)) throw new Error(`${path} (${what}) is missing: run npm run build`);
  return path;
}
