import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { resolveFerretdbLauncher } from './tools.js';
import { backupClusterPostgres, restoreClusterPostgres, type ClusterBackup } from './cluster/postgres-backup.js';

const run = promisify(execFile);

/**
 * Backup and restore of the embedded stack's data directory while it runs (docs/operations.md).
 * The chain's state first (anvil_dumpState when the node answers, else the state file anvil writes
 * every few seconds); then each SQLite database (Temporal's temporal.db, then the store's
 * ferretdb/*.sqlite) with VACUUM INTO, a consistent copy at one instant; then the small files
 * (deployment.json, dev keys). The cluster topology keeps Temporal and the store on one PostgreSQL
 * instead: cluster/postgres-backup.ts copies it whole, at one instant, in their place. Chain first,
 * Temporal next, the store last, so each copy knows at least what the one before it did: every
 * batch Temporal names has its decided set in the store, and every batch the chain settled is one
 * the store decided. The worker's chain resync (src/settlement/chain-resync.ts) then reconciles the
 * seconds between them: a batch the store recorded CONFIRMED that the chain copy lacks is sent
 * again with its set, one the chain settled that the store never recorded is ended, and a set no
 * shard of the Temporal copy names is abandoned to later batches.
 */
export interface BackupManifest {
  createdAt: string;
  sqlite: string[];
  /** The cluster topology's PostgreSQL and cluster/ files; absent for the dev topology. */
  cluster?: ClusterBackup;
  chainState: 'anvil_dumpState' | 'state file' | 'none';
  files: string[];
}

const MANIFEST = 'backup-manifest.json';
/** Files at the top of the data directory that are state, not runtime clutter (logs, locks, sockets). */
const SKIP = new Set(['logs', 'stack.lock', MANIFEST]);

function emptyTarget(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty; back up or restore into a new directory`);
  mkdirSync(dir, { recursive: true });
}

async function anvilDump(rpcUrl: string): Promise<string | null> {
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_dumpState', params: [] }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await res.json()) as { result?: string };
    if (typeof body.result !== 'string') return null;
    const bytes = Buffer.from(body.result.replace(/^0x/, ''), 'hex');
    // anvil sends its state gzipped; the --state file it loads on start is the JSON inside.
    return (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8');
  } catch {
    return null;
  }
}

export async function backupStack(o: { dataDir: string; to: string; rpcUrl?: string; log?: (m: string) => void }): Promise<BackupManifest> {
  const log = o.log ?? (() => undefined);
  emptyTarget(o.to);
  const launcher = await resolveFerretdbLauncher({ log });
  const sqlite: string[] = [];
  const copySqlite = async (relative: string) => {
    const target = join(o.to, relative);
    mkdirSync(join(target, '..'), { recursive: true });
    await run(launcher, ['sqlite-backup', join(o.dataDir, relative), target]);
    sqlite.push(relative);
  };
  // The chain first: what it settled after its copy the restored store still has (each batch's
  // decided set), so the restored stack sends it again; the other way round the chain could hold
  // payments the store never heard of.
  let chainState: BackupManifest['chainState'] = 'none';
  const dumped = o.rpcUrl ? await anvilDump(o.rpcUrl) : null;
  if (dumped !== null) {
    writeFileSync(join(o.to, 'anvil-state.json'), dumped);
    chainState = 'anvil_dumpState';
  } else if (existsSync(join(o.dataDir, 'anvil-state.json'))) {
    copyFileSync(join(o.dataDir, 'anvil-state.json'), join(o.to, 'anvil-state.json'));
    chainState = 'state file';
  }
  if (existsSync(join(o.dataDir, 'temporal.db'))) await copySqlite('temporal.db');
  const storeDir = join(o.dataDir, 'ferretdb');
  if (existsSync(storeDir)) for (const f of readdirSync(storeDir).filter((n) => n.endsWith('.sqlite')).sort()) await copySqlite(join('ferretdb', f));
  const cluster = await backupClusterPostgres(o.dataDir, o.to, log);

  const files: string[] = [];
  for (const name of readdirSync(o.dataDir).sort()) {
    if (SKIP.has(name) || name.endsWith('.log') || name === 'anvil-state.json' || name === 'temporal.db' || name.startsWith('temporal.db-')) continue;
    const path = join(o.dataDir, name);
    if (!statSync(path).isFile()) continue;
    copyFileSync(path, join(o.to, name));
    files.push(name);
  }
  const manifest: BackupManifest = { createdAt: new Date().toISOString(), sqlite, ...(cluster ? { cluster } : {}), chainState, files };
  writeFileSync(join(o.to, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  log(`backed up ${sqlite.length} databases${cluster ? `, the cluster's PostgreSQL (${cluster.postgres})` : ''}, the chain (${chainState}) and ${files.length} files to ${o.to}`);
  return manifest;
}

/** Lays a backup out as a data directory for `npm start` (DATA_DIR=<to>; the cluster topology's with --topology cluster); `to` must be new or empty. */
export function restoreStack(o: { from: string; to: string }): BackupManifest {
  const manifest = JSON.parse(readFileSync(join(o.from, MANIFEST), 'utf8')) as BackupManifest;
  emptyTarget(o.to);
  const names = [...manifest.sqlite, ...manifest.files, ...(manifest.chainState === 'none' ? [] : ['anvil-state.json'])];
  for (const name of names) {
    mkdirSync(join(o.to, name, '..'), { recursive: true });
    copyFileSync(join(o.from, name), join(o.to, name));
  }
  if (manifest.cluster) restoreClusterPostgres(o.from, o.to, manifest.cluster);
  return manifest;
}
