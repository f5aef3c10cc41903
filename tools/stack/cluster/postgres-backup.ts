import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { LOCALHOST } from '../args.js';
import { pgBinary, postgresLayout, readPostgresPassword } from './postgres.js';
import { CLUSTER_SQL_USER } from './temporal-config.js';

const run = promisify(execFile);

/**
 * The cluster topology's PostgreSQL (Temporal's two databases and the store's, on one server) in a
 * backup of the data directory. While the server runs, pg_basebackup copies every database at one
 * instant, the WAL streamed beside it so that the copy opens consistent; a stopped server's data
 * directory is copied as it lies (after a crash, PostgreSQL replays its WAL on the next start).
 * Either way Temporal and the store come from the same instant, before the chain is copied.
 */
export type PostgresCopy = 'pg_basebackup' | 'stopped copy';

export interface ClusterBackup {
  postgres: PostgresCopy;
  /** Files directly under cluster/: the SQL password, the second settler's key, the schema marker (whose absence would re-create every database). */
  files: string[];
}

const CLUSTER = 'cluster';
const PGDATA = join(CLUSTER, 'postgres');
/** The server's run-time files, never part of a copy. */
const RUNTIME = new Set(['postmaster.pid', 'postmaster.opts']);

/** The port of the postmaster running on `dir`, from its postmaster.pid (line 4); undefined when none runs. */
function runningPort(dir: string): number | undefined {
  const file = join(dir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const [pid, , , port] = readFileSync(file, 'utf8').split('\n');
  try {
    process.kill(Number(pid), 0);
  } catch {
    return undefined; // left behind by a crash
  }
  return Number(port);
}

/** Copies <dataDir>/cluster into <to>/cluster; undefined when the data dir holds no cluster. */
export async function backupClusterPostgres(dataDir: string, to: string, log: (m: string) => void): Promise<ClusterBackup | undefined> {
  const layout = postgresLayout(join(dataDir, CLUSTER));
  if (!existsSync(join(layout.dir, 'PG_VERSION'))) return undefined;
  const target = join(to, PGDATA);
  mkdirSync(join(to, CLUSTER), { recursive: true });
  const port = runningPort(layout.dir);
  let postgres: PostgresCopy;
  if (port) {
    const args = ['-h', LOCALHOST, '-p', String(port), '-U', CLUSTER_SQL_USER, '-w', '-D', target, '-F', 'plain', '-X', 'stream', '--checkpoint=fast'];
    try {
      await run(pgBinary('pg_basebackup'), args, { env: { ...process.env, PGPASSWORD: readPostgresPassword(layout) }, timeout: 30 * 60_000, maxBuffer: 16 * 1024 * 1024 });
    } catch (err) {
      throw new Error(`pg_basebackup of the cluster's PostgreSQL (port ${port}) failed: ${(err as { stderr?: string }).stderr?.trim() || String(err)}`);
    }
    postgres = 'pg_basebackup';
  } else {
    cpSync(layout.dir, target, { recursive: true, filter: (src) => !RUNTIME.has(basename(src)) });
    postgres = 'stopped copy';
  }
  const files = readdirSync(join(dataDir, CLUSTER)).filter((n) => statSync(join(dataDir, CLUSTER, n)).isFile()).sort();
  for (const name of files) cpSync(join(dataDir, CLUSTER, name), join(to, CLUSTER, name));
  log(`postgres: copied by ${postgres}, with ${files.length} files of cluster/`);
  return { postgres, files };
}

/**
 * Lays the copy out under <to>/cluster. The next start hands the data directory to the postgres
 * user when it runs as root (postgres.ts), and replays the WAL the copy carries.
 */
export function restoreClusterPostgres(from: string, to: string, backup: ClusterBackup): void {
  mkdirSync(join(to, CLUSTER), { recursive: true, mode: 0o711 });
  cpSync(join(from, PGDATA), join(to, PGDATA), { recursive: true });
  chmodSync(join(to, PGDATA), 0o700);
  for (const name of backup.files) cpSync(join(from, CLUSTER, name), join(to, CLUSTER, name));
}
