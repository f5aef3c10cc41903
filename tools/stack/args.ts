export const SEARCH_ATTRIBUTES = {
  MerchantId: 'Keyword',
  BorrowerId: 'Keyword',
  PaymentStatus: 'Keyword',
  BatchId: 'Keyword',
  OrderRef: 'Keyword',
} as const;

export const LOCALHOST = '127.0.0.1';

export interface TemporalArgs {
  port: number;
  uiPort?: number | undefined;
  headless: boolean;
  dbFile: string;
  namespace: string;
}

/**
 * SQLite in write-ahead-log mode with fsync at checkpoints instead of every commit: bare workflow
 * starts went from about 100/s to about 230/s on the 2-core box (docs/benchmarks.md). A power cut
 * can lose the last commits of the dev server's file, never corrupt it.
 */
export const TEMPORAL_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'] as const;

/**
 * One partition per task queue: the dev server is one node, where the default four partitions only
 * add forwarding between partitions before a task meets a poller.
 *
 * Search attributes from the cache: start-dev turns on a refresh from the database at every read
 * so attributes created at run time show at once, which cost the server a read and a lock per
 * workflow start and visibility write (5 % of its CPU under the bench). This stack creates its
 * attributes with the database file, before the server reads them; one created later by an
 * operator shows within a minute, as on any Temporal cluster.
 *
 * No eager activity dispatch (server 1.32 turned it on by default): with it, a settlement shard's
 * activities run on the worker that holds the shard's workflow in its sticky cache, so a second
 * worker stays idle and does not take over a dead one's shard steps until they time out (the
 * scale-out fault test saw one worker mine 49 batches and the other none). Activities go through
 * the task queue to whichever worker polls, as on server 1.29 and before.
 */
export const TEMPORAL_DYNAMIC_CONFIG = [
  'matching.numTaskqueueReadPartitions=1',
  'matching.numTaskqueueWritePartitions=1',
  'system.forceSearchAttributesCacheRefreshOnRead=false',
  'system.enableActivityEagerExecution=false',
] as const;

export function temporalArgs(o: TemporalArgs): string[] {
  const args = ['server', 'start-dev', '--ip', LOCALHOST, '--port', String(o.port), '--db-filename', o.dbFile, '--log-level', 'warn'];
  for (const pragma of TEMPORAL_SQLITE_PRAGMAS) args.push('--sqlite-pragma', pragma);
  for (const value of TEMPORAL_DYNAMIC_CONFIG) args.push('--dynamic-config-value', value);
  if (o.headless) args.push('--headless');
  else if (o.uiPort !== undefined) args.push('--ui-port', String(o.uiPort));
  if (o.namespace !== 'default') args.push('--namespace', o.namespace);
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  return args;
}

/** anvil's arguments; `blockTimeSeconds` > 0 mines a block every that many seconds (a real chain's rhythm) instead of one per transaction. */
export function anvilArgs(o: { port: number; chainId: number; stateFile: string; stateIntervalSeconds: number; blockTimeSeconds?: number }): string[] {
  return [
    '--host', LOCALHOST,
    '--port', String(o.port),
    '--chain-id', String(o.chainId),
    '--state', o.stateFile,
    '--state-interval', String(o.stateIntervalSeconds),
    ...(o.blockTimeSeconds && o.blockTimeSeconds > 0 ? ['--block-time', String(o.blockTimeSeconds)] : []),
    '--silent',
  ];
}

export function mongodArgs(o: { port: number; dbPath: string }): string[] {
  return ['--dbpath', o.dbPath, '--bind_ip', LOCALHOST, '--port', String(o.port), '--quiet'];
}

/**
 * FerretDB's SQLite commits without an fsync each (WAL, synchronous=normal): a killed process
 * loses nothing; a power cut can roll the store back to a consistent earlier point, as a
 * standalone mongod acknowledging w:1 before its journal commit can. `full` restores an fsync
 * per commit (docs/operations.md, measured in docs/scaling.md).
 */
export type SqliteSynchronous = 'normal' | 'full';

/** `postgresql` (cluster topology): FerretDB reads its PostgreSQL URL from FERRETDB_POSTGRESQL_URL, kept out of argv. */
export type FerretdbBackend = 'sqlite' | 'postgresql';

export function ferretdbArgs(o: { port: number; dataDir: string; synchronous?: SqliteSynchronous; backend?: FerretdbBackend }): string[] {
  const args = ['-listen', `${LOCALHOST}:${o.port}`, '-data-dir', o.dataDir, '-log-level', 'error', '-synchronous', o.synchronous ?? 'normal'];
  return o.backend === 'postgresql' ? [...args, '-backend', 'postgresql'] : args;
}

/**
 * The embedded Go servers (Temporal, FerretDB) collect garbage at GOGC=400 instead of 100: their
 * heaps are small and memory is plentiful, and the profile showed a tenth of FerretDB's CPU in the
 * collector. An operator's GOGC in the environment wins.
 */
export const EMBEDDED_GOGC = '400';

export function embeddedGoEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, GOGC: env.GOGC ?? EMBEDDED_GOGC };
}

/**
 * The stack's Node processes (API, worker) get a 64 MiB young generation instead of V8's 16 MiB:
 * each payment allocates short-lived request, BSON and workflow-activation objects, and a larger
 * nursery lets more of them die there instead of being promoted and marked. Three interleaved
 * bench pairs (docs/scaling.md): 1.3-2.0 ms less CPU per payment, worker and API both lower.
 * An operator's own --max-semi-space-size in NODE_OPTIONS wins.
 */
export const STACK_NODE_YOUNG_GENERATION = '--max-semi-space-size=64';

export function stackNodeOptions(existing: string | undefined): string {
  if (existing && /--max-semi-space-size\b/.test(existing)) return existing;
  return existing ? `${STACK_NODE_YOUNG_GENERATION} ${existing}` : STACK_NODE_YOUNG_GENERATION;
}

export function localMongoUri(port: number): string {
  return `mongodb://${LOCALHOST}:${port}/`;
}

export function parseHostPort(address: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address.trim());
  if (!m) throw new Error(`expected host:port, got ${JSON.stringify(address)}`);
  return { host: m[1]!, port: Number(m[2]) };
}

export function redactUri(uri: string): string {
  return uri.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1***@');
}
