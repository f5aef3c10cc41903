import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LOCALHOST } from '../args.js';
import { findOnPath } from '../which.js';
import type { SpawnOptions } from '../processes.js';
import { CLUSTER_SQL_USER } from './temporal-config.js';

const run = promisify(execFile);

/**
 * PostgreSQL refuses to run as root. When the stack runs as root (CI, these machines), the server
 * and initdb run as the `postgres` system user through setpriv, which execs in place: the pid we
 * hold is the postmaster's own, so stop() and kill() reach it.
 */
interface RunAs {
  prefix: string[];
  uid: number;
  gid: number;
}

function runAsForRoot(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const setpriv = findOnPath('setpriv');
  if (!setpriv) throw new Error('running as root, PostgreSQL needs setpriv (util-linux) to drop to the postgres user');
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!passwd) throw new Error('running as root, PostgreSQL needs a postgres system user (the postgresql package creates it)');
  const [, , uid, gid] = passwd.split(':');
  return { prefix: [setpriv, '--reuid=postgres', '--regid=postgres', '--init-groups', '--'], uid: Number(uid), gid: Number(gid) };
}

export function pgBinary(name: string): string {
  const found = findOnPath(name) ?? ['/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].map((d) => join(d, name)).find(existsSync);
  if (!found) throw new Error(`${name} not found: the cluster topology needs PostgreSQL (initdb, postgres) on PATH`);
  return found;
}

export interface PostgresLayout {
  /** The cluster's data directory (PGDATA). */
  dir: string;
  /** The password of CLUSTER_SQL_USER, 32 random bytes made at initdb, mode 0600. */
  passwordFile: string;
}

export function postgresLayout(clusterDir: string): PostgresLayout {
  return { dir: join(clusterDir, 'postgres'), passwordFile: join(clusterDir, 'postgres-password') };
}

export function readPostgresPassword(layout: PostgresLayout): string {
  return readFileSync(layout.passwordFile, 'utf8').trim();
}

/** A directory the postgres user must pass through (the data dir's parents): searchable by others, not listable. */
function letOthersTraverse(dir: string): void {
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
}

function chownTree(path: string, uid: number, gid: number): void {
  lchownSync(path, uid, gid);
  if (lstatSync(path).isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name), uid, gid);
}

/**
 * A data dir laid out by someone else (`stack restore` as root, a copy) is handed to the user the
 * server runs as, with the 0700 mode PostgreSQL insists on, and its parents made passable.
 */
function handOverExisting(layout: PostgresLayout, traverse: string[], runAs: RunAs | undefined, log: (m: string) => void): void {
  if ((statSync(layout.dir).mode & 0o077) !== 0) chmodSync(layout.dir, 0o700);
  if (!runAs) return;
  for (const d of traverse) letOthersTraverse(d);
  if (statSync(layout.dir).uid === runAs.uid) return;
  log(`postgres: ${layout.dir} handed to the postgres user`);
  chownTree(layout.dir, runAs.uid, runAs.gid);
}

/**
 * initdb once (a data dir with PG_VERSION is kept, see handOverExisting): superuser CLUSTER_SQL_USER
 * with a random password, scram-sha-256 for every connection, UTF8, C collation.
 */
export async function ensurePostgresInitialised(layout: PostgresLayout, traverse: string[], log: (m: string) => void): Promise<void> {
  const runAs = runAsForRoot();
  if (existsSync(join(layout.dir, 'PG_VERSION'))) return handOverExisting(layout, traverse, runAs, log);
  if (!existsSync(layout.passwordFile)) writeFileSync(layout.passwordFile, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  rmSync(layout.dir, { recursive: true, force: true });
  mkdirSync(layout.dir, { mode: 0o700 });
  // initdb reads the password from a file it can open: a copy owned by the postgres user, removed right after.
  const pwfile = `${layout.dir}.pwfile`;
  writeFileSync(pwfile, readPostgresPassword(layout), { mode: 0o600 });
  if (runAs) {
    for (const d of traverse) letOthersTraverse(d);
    chownSync(layout.dir, runAs.uid, runAs.gid);
    chownSync(pwfile, runAs.uid, runAs.gid);
  }
  log(`postgres: initdb ${layout.dir}${runAs ? ' (as the postgres user)' : ''}`);
  const initdb = pgBinary('initdb');
  const args = ['-D', layout.dir, '-U', CLUSTER_SQL_USER, '--pwfile', pwfile, '--auth', 'scram-sha-256', '-E', 'UTF8', '--locale', 'C'];
  try {
    const [command, ...rest] = runAs ? [...runAs.prefix, initdb, ...args] : [initdb, ...args];
    await run(command!, rest, { timeout: 120_000 });
  } catch (err) {
    rmSync(layout.dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/**
 * The postmaster on 127.0.0.1 only, no Unix socket. Connections: four Temporal services with up to
 * 30 each, FerretDB's pool and the SQL tool fit well under 300. SIGINT is PostgreSQL's fast
 * shutdown (SIGTERM would wait for every client to disconnect).
 *
 * `synchronousCommit` follows the embedded store's durability setting (FERRETDB_SQLITE_SYNCHRONOUS):
 * `normal` -> `synchronous_commit=off`, the dev stack's trade (a killed process loses nothing, a
 * power cut the last few hundred milliseconds of commits, never consistency); `full` -> `on`, an
 * fsync per commit, what production runs.
 */
export function postgresSpec(layout: PostgresLayout, port: number, synchronousCommit: 'on' | 'off' = 'on'): SpawnOptions {
  const runAs = runAsForRoot();
  const postgres = pgBinary('postgres');
  const args = ['-D', layout.dir, '-p', String(port), '-c', `listen_addresses=${LOCALHOST}`, '-c', 'unix_socket_directories=', '-c', 'max_connections=300', '-c', `synchronous_commit=${synchronousCommit}`];
  const [command, ...rest] = runAs ? [...runAs.prefix, postgres, ...args] : [postgres, ...args];
  return { name: 'postgres', command: command!, args: rest, stopSignal: 'SIGINT' };
}

/** postgres://user:password@127.0.0.1:port/database (the password URL-encoded). */
export function postgresUrl(port: number, password: string, database: string, params: Record<string, string> = {}): string {
  const query = new URLSearchParams(params).toString();
  return `postgres://${CLUSTER_SQL_USER}:${encodeURIComponent(password)}@${LOCALHOST}:${port}/${database}${query ? `?${query}` : ''}`;
}

/**
 * FerretDB's session settings. Its filters reach PostgreSQL as `_jsonb -> $1 @> $2` in cached
 * prepared statements; only a plan made with the values can use the lookup indexes the launcher
 * adds (tools/ferretdb/pgindex.go), and a generic plan, which PostgreSQL may pick after five runs
 * while a table is small, would scan the table for the life of the connection.
 */
export const FERRETDB_SESSION = { plan_cache_mode: 'force_custom_plan' } as const;
