import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { anvilArgs, embeddedGoEnv, type SqliteSynchronous, ferretdbArgs, LOCALHOST, localMongoUri, mongodArgs, temporalArgs } from './args.js';
import { assertPortFree, portOpen, spawnManaged, waitForPort, waitUntil, type ExitInfo, type ManagedProcess, type SpawnOptions } from './processes.js';
import { chainId, mongoPing, temporalReady } from './probes.js';
import { ensureStackTools, resolveAnvil, resolveMongod } from './tools.js';
import { trimVisibilityIndexes } from './visibility-indexes.js';
import { startTemporalCluster, type TemporalCluster } from './cluster/temporal-cluster.js';
import { ensureTemporalServer } from './cluster/temporal-server-build.js';

export interface InfraOptions {
  dataDir: string;
  temporal: { port: number; uiPort?: number; headless?: boolean; namespace: string; cliPath?: string | undefined; topology?: TemporalTopology };
  mongo: { uri?: string | undefined; port: number; synchronous?: SqliteSynchronous };
  chain: { rpcUrl?: string | undefined; port: number; chainId: number; stateIntervalSeconds?: number; blockTimeSeconds?: number };
  /** Children's output goes to <dataDir>/logs/<name>.log instead of the terminal. */
  quiet?: boolean;
  log?: (message: string) => void;
  signal?: AbortSignal;
  readyTimeoutMs?: number;
  onUnexpectedExit?: (name: string, info: ExitInfo) => void;
}

export interface TemporalRestart {
  kill?: boolean;
  downMs?: number;
}

/** How a server of ours is restarted: SIGTERM (or SIGKILL when `kill`), `downMs` down, then started on the same data. */
export type ServerRestart = TemporalRestart;

export type MongoKind = 'external' | 'mongod' | 'ferretdb';

/** `dev`: one `temporal server start-dev` process on SQLite; `cluster`: tools/stack/cluster (PostgreSQL, four services). */
export type TemporalTopology = 'dev' | 'cluster';

export interface Infra {
  temporalAddress: string;
  temporalUiUrl?: string;
  mongoUri: string;
  mongoKind: MongoKind;
  rpcUrl: string;
  ownsAnvil: boolean;
  topology: TemporalTopology;
  /** The cluster topology's own parts (postgres, temporal-<service>), restartable by name; absent on the dev server. */
  cluster?: TemporalCluster;
  /** Started by us, in start order. */
  processes: ManagedProcess[];
  /**
   * Stops our Temporal dev server (SIGTERM, or SIGKILL when `kill`), leaves it down for `downMs`, and
   * starts it again on the same database file and port; resolves once the namespace answers.
   * Clients must reconnect on their own.
   */
  restartTemporal(opts?: TemporalRestart): Promise<void>;
  /** The same for our store (FerretDB or mongod) on its data directory; an external store is not ours to restart. */
  restartStore(opts?: ServerRestart): Promise<void>;
  /** The same for our anvil on its state file (what it wrote last: every few seconds, and at a graceful stop). */
  restartChain(opts?: ServerRestart): Promise<void>;
  stop(): Promise<void>;
}

export async function stopAll(processes: ManagedProcess[], timeoutMs = 15_000): Promise<void> {
  for (const p of [...processes].reverse()) await p.stop(timeoutMs);
}

/** Start Temporal, the Mongo-wire store and anvil (each unless external), and wait until all answer. */
export async function startInfra(opts: InfraOptions): Promise<Infra> {
  const log = opts.log ?? ((m: string) => console.log(m));
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const timeoutMs = opts.readyTimeoutMs ?? 120_000;

  const mongod = opts.mongo.uri ? undefined : resolveMongod();
  const mongoKind: MongoKind = opts.mongo.uri ? 'external' : mongod ? 'mongod' : 'ferretdb';
  const topology = opts.temporal.topology ?? 'dev';
  const [{ temporal: temporalBin, visibilityTrimmer, ferretdb }, serverBinaries] = await Promise.all([
    ensureStackTools({ cliPath: opts.temporal.cliPath, ferretdb: mongoKind === 'ferretdb', log, signal: opts.signal }),
    topology === 'cluster' ? ensureTemporalServer(log, opts.signal) : undefined,
  ]);
  const anvil = opts.chain.rpcUrl ? undefined : resolveAnvil();

  const headless = (opts.temporal.headless ?? false) || topology === 'cluster';
  const uiPort = headless ? undefined : (opts.temporal.uiPort ?? opts.temporal.port + 1000);
  await assertPortFree(opts.temporal.port, 'Temporal');
  if (uiPort !== undefined) await assertPortFree(uiPort, 'the Temporal UI');
  if (mongoKind !== 'external') await assertPortFree(opts.mongo.port, 'the Mongo-wire store');
  if (anvil) await assertPortFree(opts.chain.port, 'anvil');

  const processes: ManagedProcess[] = [];
  const failed = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, failed.signal]) : failed.signal;
  const spawn = (spec: SpawnOptions) => {
    const p = spawnManaged({ ...spec, logFile: opts.quiet ? join(dataDir, 'logs', `${spec.name}.log`) : undefined });
    p.onUnexpectedExit((info) => opts.onUnexpectedExit?.(spec.name, info));
    return p;
  };
  const start = (spec: SpawnOptions) => {
    const p = spawn(spec);
    processes.push(p);
    return p;
  };

  const temporalAddress = `${LOCALHOST}:${opts.temporal.port}`;
  const mongoUri = opts.mongo.uri ?? localMongoUri(opts.mongo.port);
  const rpcUrl = opts.chain.rpcUrl ?? `http://${LOCALHOST}:${opts.chain.port}`;
  const temporalDb = join(dataDir, 'temporal.db');
  const temporalSpec: SpawnOptions = {
    name: 'temporal',
    command: temporalBin,
    args: temporalArgs({ ...opts.temporal, headless, uiPort, dbFile: temporalDb }),
    env: embeddedGoEnv(),
  };
  const temporalAnswers = (temporal: ManagedProcess, waitSignal: AbortSignal | undefined) =>
    waitForPort(LOCALHOST, opts.temporal.port, { proc: temporal, timeoutMs, signal: waitSignal, what: 'the Temporal frontend' }).then(() =>
      waitUntil(() => temporalReady(temporalAddress, opts.temporal.namespace), {
        what: `Temporal namespace ${opts.temporal.namespace}`,
        proc: temporal,
        timeoutMs,
        intervalMs: 500,
        signal: waitSignal,
      }),
    );
  let cluster: TemporalCluster | undefined;
  if (serverBinaries) {
    try {
      cluster = await startTemporalCluster({
        dataDir, frontendPort: opts.temporal.port, namespace: opts.temporal.namespace, binaries: serverBinaries, temporalCli: temporalBin,
        spawn, processes, log, signal: opts.signal, timeoutMs, synchronousCommit: opts.mongo.synchronous === 'full' ? 'on' : 'off',
      });
    } catch (err) {
      await stopAll(processes);
      throw err;
    }
  }
  const storeSpec: SpawnOptions | undefined = mongod
    ? { name: 'mongod', command: mongod, args: mongodArgs({ port: opts.mongo.port, dbPath: join(dataDir, 'mongo') }) }
    : ferretdb
      ? { name: 'ferretdb', command: ferretdb, args: ferretdbArgs({ port: opts.mongo.port, dataDir: join(dataDir, 'ferretdb'), synchronous: opts.mongo.synchronous, backend: cluster ? 'postgresql' : 'sqlite' }), env: { ...embeddedGoEnv(), ...(cluster ? { FERRETDB_POSTGRESQL_URL: cluster.ferretdbPostgresUrl } : {}) } }
      : undefined;
  const storeAnswers = (store: ManagedProcess | undefined, waitSignal: AbortSignal | undefined) =>
    waitUntil(() => mongoPing(mongoUri), { what: `MongoDB ping (${mongoKind})`, proc: store, timeoutMs, intervalMs: 300, signal: waitSignal });
  const chainSpec: SpawnOptions | undefined = anvil
    ? {
        name: 'anvil',
        command: anvil,
        args: anvilArgs({
          port: opts.chain.port,
          chainId: opts.chain.chainId,
          stateFile: join(dataDir, 'anvil-state.json'),
          stateIntervalSeconds: opts.chain.stateIntervalSeconds ?? 5,
          ...(opts.chain.blockTimeSeconds ? { blockTimeSeconds: opts.chain.blockTimeSeconds } : {}),
        }),
      }
    : undefined;
  const chainAnswers = (chain: ManagedProcess | undefined, waitSignal: AbortSignal | undefined) =>
    waitUntil(async () => (await chainId(rpcUrl)) > 0, { what: `eth_chainId at ${rpcUrl}`, proc: chain, timeoutMs, intervalMs: 200, signal: waitSignal });
  try {
    const temporal = cluster ? undefined : start(temporalSpec);
    if (mongod) mkdirSync(join(dataDir, 'mongo'), { recursive: true });
    const store = storeSpec ? start(storeSpec) : undefined;
    const chain = chainSpec ? start(chainSpec) : undefined;

    await Promise.all([
      temporal ? temporalAnswers(temporal, signal).then(async () => log(`temporal: ${await trimVisibilityIndexes(visibilityTrimmer, temporalDb)}`)) : undefined,
      storeAnswers(store, signal),
      chainAnswers(chain, signal),
    ]).catch((err: unknown) => {
      failed.abort();
      throw err;
    });
    const actualChainId = await chainId(rpcUrl);
    if (actualChainId !== opts.chain.chainId) {
      throw new Error(`the chain at ${rpcUrl} has chain id ${actualChainId}, expected CHAIN_ID=${opts.chain.chainId}`);
    }
  } catch (err) {
    await stopAll(processes);
    throw err;
  }

  /** Stops one of our servers, leaves its port closed for `downMs`, and starts it again from the same spec. */
  const restartOwn = async (spec: SpawnOptions, port: number, restart: ServerRestart, answers: (fresh: ManagedProcess) => Promise<void>) => {
    const at = processes.findIndex((p) => p.name === spec.name);
    const old = processes[at];
    if (!old) throw new Error(`${spec.name} is not ours to restart`);
    if (restart.kill) {
      old.kill('SIGKILL');
      await old.exited;
    } else await old.stop(15_000);
    await waitUntil(async () => !(await portOpen(LOCALHOST, port)), { what: `port ${port} to close`, timeoutMs: 15_000 });
    await new Promise((r) => setTimeout(r, restart.downMs ?? 0));
    const fresh = spawn(spec);
    processes[at] = fresh;
    await answers(fresh);
  };

  return {
    temporalAddress,
    ...(uiPort !== undefined ? { temporalUiUrl: `http://${LOCALHOST}:${uiPort}` } : {}),
    mongoUri,
    mongoKind,
    rpcUrl,
    ownsAnvil: anvil !== undefined,
    topology,
    ...(cluster ? { cluster } : {}),
    processes,
    async restartTemporal(restart = {}) {
      if (!cluster) return restartOwn(temporalSpec, opts.temporal.port, restart, (fresh) => temporalAnswers(fresh, opts.signal));
      for (const name of cluster.partNames.filter((n) => n !== 'postgres')) await cluster.restart(name, restart);
    },
    async restartStore(restart = {}) {
      if (!storeSpec) throw new Error('the store is external: not ours to restart');
      await restartOwn(storeSpec, opts.mongo.port, restart, (fresh) => storeAnswers(fresh, opts.signal));
    },
    async restartChain(restart = {}) {
      if (!chainSpec) throw new Error('the chain is external: not ours to restart');
      await restartOwn(chainSpec, opts.chain.port, restart, (fresh) => chainAnswers(fresh, opts.signal));
    },
    stop: () => stopAll(processes),
  };
}
