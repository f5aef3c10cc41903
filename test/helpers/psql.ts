import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pgBinary } from '../../tools/stack/cluster/postgres.js';

const run = promisify(execFile);

/**
 * Runs SQL with psql on the cluster's PostgreSQL, given a connection URL (its query parameters,
 * session settings psql does not take, are left off), on its database or on `database`.
 */
export function psqlAt(url: string, database?: string): (sql: string) => Promise<string> {
  const u = new URL(url);
  u.search = '';
  if (database) u.pathname = `/${database}`;
  return async (sql) => (await run(pgBinary('psql'), [u.toString(), '-v', 'ON_ERROR_STOP=1', '-At', '-c', sql], { timeout: 30_000 })).stdout;
}
