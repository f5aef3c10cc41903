import { resolve } from 'node:path';
import { loadEnv } from '../../src/config/env.js';
import { dataDir } from '../../src/config/paths.js';
import { backupStack, restoreStack } from '../stack/backup.js';
import { UsageError } from './output.js';

/** Backs up the embedded stack's data directory (DATA_DIR, either topology) while it runs; see docs/operations.md. */
export async function stackBackup(opts: { to?: string; rpcUrl?: string }) {
  if (!opts.to) throw new UsageError('--to <new directory> is required');
  const env = loadEnv();
  const from = dataDir(env.DATA_DIR);
  const rpcUrl = opts.rpcUrl ?? env.RPC_URL ?? `http://127.0.0.1:${env.ANVIL_PORT}`;
  const manifest = await backupStack({ dataDir: from, to: resolve(opts.to), rpcUrl });
  const { cluster, ...rest } = manifest;
  return { from, to: resolve(opts.to), ...rest, sqlite: rest.sqlite.join(', '), postgres: cluster?.postgres ?? 'none', files: [...rest.files, ...(cluster?.files.map((f) => `cluster/${f}`) ?? [])].join(', ') };
}

/** Lays a backup out as a new data directory, for `DATA_DIR=<to> npm start`. */
export function stackRestore(opts: { from?: string; to?: string }) {
  if (!opts.from || !opts.to) throw new UsageError('--from <backup directory> and --to <new data directory> are required');
  const manifest = restoreStack({ from: resolve(opts.from), to: resolve(opts.to) });
  const start = manifest.cluster ? 'npm run stack -- --topology cluster' : 'npm start';
  return { from: resolve(opts.from), to: resolve(opts.to), createdAt: manifest.createdAt, next: `DATA_DIR=${resolve(opts.to)} ${start}` };
}
