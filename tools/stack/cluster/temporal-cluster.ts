import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedGoEnv, LOCALHOST } from '../args.js';
import { freePort, portOpen, waitForPort, waitUntil, type ManagedProcess, type SpawnOptions } from '../processes.js';
import { temporalReady } from '../probes.js';
import { ensureNamespaceWithCli } from './namespace.js';
import { ensurePostgresInitialised, postgresLayout, postgresSpec, postgresUrl, readPostgresPassword, FERRETDB_SESSION } from './postgres.js';
import { FERRETDB_DATABASE, setUpTemporalSchema } from './schema.js';
import { trimPostgresVisibilityIndexes } from './visibility-indexes.js';
import { CLUSTER_HISTORY_SHARDS, TEMPORAL_SERVICES, temporalClusterConfig, temporalClusterDynamicConfig, type ServicePorts, type TemporalService } from './temporal-config.js';
import type { TemporalServerBinaries } from './temporal-server-build.js';

export interface TemporalClusterOptions {
  dataDir: string;
  frontendPort: number;
  namespace: string;
  binaries: TemporalServerBinaries;
  /** The Temporal CLI, for the operator's namespace and search-attribute commands. */
  temporalCli: string;
  /** Spawns a part with the stack's logging and exit handling (does not record it). */
  spawn: (spec: SpawnOptions) => ManagedProcess;
  /** The stack's list of running parts: the cluster appends its own and swaps them on restart. */
  processes: ManagedProcess[];
  log: (m: string) => void;
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  /** PostgreSQL's `synchronous_commit` (postgres.ts: from FERRETDB_SQLITE_SYNCHRONOUS). */
  synchronousCommit: 'on' | 'off';
}

export interface ClusterRestart {
  kill?: boolean;
  downMs?: number;
}

export interface TemporalCluster {
  temporalAddress: string;
  postgresPort: number;
  /** FerretDB's PostgreSQL backend (carries the password: never log it). */
  ferretdbPostgresUrl: string;
  /** postgres, temporal-frontend, temporal-history, temporal-matching, temporal-worker. */
  partNames: string[];
  /** Stops one part (SIGKILL when `kill`), leaves it down `downMs`, starts it on the same ports and data; resolves once it answers. */
  restart(name: string, restart?: ClusterRestart): Promise<void>;
}

export const servicePartName = (s: TemporalService) => `temporal-${s}`;

/**
 * PostgreSQL, the schema, then frontend, history, matching and worker as four processes of one
 * server build sharing one generated config, then the namespace and search attributes through the
 * CLI. Everything lives under <dataDir>/cluster; ports other than the frontend's are picked free at
 * each start (membership is discovered through the database, not fixed addresses).
 */
export async function startTemporalCluster(o: TemporalClusterOptions): Promise<TemporalCluster> {
  const clusterDir = join(o.dataDir, 'cluster');
  mkdirSync(clusterDir, { recursive: true, mode: 0o711 });
  const layout = postgresLayout(clusterDir);
  await ensurePostgresInitialised(layout, [o.dataDir, clusterDir], o.log);
  const password = readPostgresPassword(layout);
  const postgresPort = await freePort();
  const pgSpec = postgresSpec(layout, postgresPort, o.synchronousCommit);
  const start = (spec: SpawnOptions) => {
    const p = o.spawn(spec);
    o.processes.push(p);
    return p;
  };

  const postgres = start(pgSpec);
  const pgAnswers = (proc: ManagedProcess) => waitForPort(LOCALHOST, postgresPort, { proc, timeoutMs: o.timeoutMs, signal: o.signal, what: 'PostgreSQL' });
  await pgAnswers(postgres);
  const sqlTarget = { sqlTool: o.binaries.sqlTool, port: postgresPort, password };
  // Open port, yet "the database system is starting up" for a moment: the first tool call retries.
  await waitUntil(
    () => setUpTemporalSchema(sqlTarget, clusterDir, o.log).then(() => true, (err: Error) => (/starting up|connection refused|shutting down/i.test(err.message) ? false : Promise.reject(err))),
    { what: 'the Temporal schema on PostgreSQL', proc: postgres, timeoutMs: o.timeoutMs, intervalMs: 500, signal: o.signal },
  );
  const dropped = await trimPostgresVisibilityIndexes(sqlTarget);
  if (dropped > 0) o.log(`postgres: dropped ${dropped} visibility indexes nothing here queries (tools/stack/cluster/visibility-indexes.ts)`);

  const ports = {} as Record<TemporalService, ServicePorts>;
  for (const s of TEMPORAL_SERVICES) {
    ports[s] = { grpc: s === 'frontend' ? o.frontendPort : await freePort(), membership: await freePort(), ...(s === 'frontend' ? { http: await freePort() } : {}) };
  }
  const configFile = join(clusterDir, 'temporal.yaml');
  const dynamicConfigFile = join(clusterDir, 'dynamicconfig.yaml');
  writeFileSync(dynamicConfigFile, temporalClusterDynamicConfig(), { mode: 0o600 });
  writeFileSync(configFile, temporalClusterConfig({ postgresPort, shards: CLUSTER_HISTORY_SHARDS, ports, dynamicConfigFile }), { mode: 0o600 });

  const serviceSpec = (s: TemporalService): SpawnOptions => ({
    name: servicePartName(s),
    command: o.binaries.server,
    args: ['--config-file', configFile, '--allow-no-auth', 'start', '--service', s],
    env: { ...embeddedGoEnv(), SQL_PASSWORD: password },
    cwd: clusterDir,
  });
  const specs = new Map<string, { spec: SpawnOptions; port: number }>([[pgSpec.name, { spec: pgSpec, port: postgresPort }]]);
  for (const s of TEMPORAL_SERVICES) specs.set(servicePartName(s), { spec: serviceSpec(s), port: ports[s].grpc });

  const temporalAddress = `${LOCALHOST}:${o.frontendPort}`;
  const namespaceAnswers = (proc: ManagedProcess | undefined, signal: AbortSignal | undefined) =>
    waitUntil(() => temporalReady(temporalAddress, o.namespace), { what: `Temporal namespace ${o.namespace} on the cluster`, proc, timeoutMs: o.timeoutMs, intervalMs: 500, signal });

  const serviceUp = (s: TemporalService, proc: ManagedProcess) => waitForPort(LOCALHOST, ports[s].grpc, { proc, timeoutMs: o.timeoutMs, signal: o.signal, what: `the Temporal ${s} service` });
  // Every service writes the cluster's metadata record when it finds none: on a fresh database, four
  // at once race on its primary key and the losers exit. The first one alone creates it.
  const [first, ...rest] = TEMPORAL_SERVICES;
  const firstProc = start(specs.get(servicePartName(first))!.spec);
  await serviceUp(first, firstProc);
  const others = rest.map((s) => start(specs.get(servicePartName(s))!.spec));
  await Promise.all(rest.map((s, i) => serviceUp(s, others[i]!)));
  const services = [firstProc, ...others];
  await waitUntil(
    async () => {
      const created = await ensureNamespaceWithCli(o.temporalCli, temporalAddress, o.namespace).catch((err: Error) => {
        // The frontend answers before history owns its shards: retry on unavailability, fail on anything else.
        if (/unavailable|deadline|not ready|shard|no hosts|context canceled|connection refused/i.test(err.message)) return undefined;
        throw err;
      });
      if (created && created.length > 0) o.log(`temporal operator: created ${created.join(', ')}`);
      return created !== undefined;
    },
    { what: 'the namespace through temporal operator', proc: services[0], timeoutMs: o.timeoutMs, intervalMs: 1000, signal: o.signal },
  );
  await namespaceAnswers(services[0], o.signal);

  return {
    temporalAddress,
    postgresPort,
    ferretdbPostgresUrl: postgresUrl(postgresPort, password, FERRETDB_DATABASE, FERRETDB_SESSION),
    partNames: [...specs.keys()],
    async restart(name, restart = {}) {
      const entry = specs.get(name);
      const at = o.processes.findIndex((p) => p.name === name);
      if (!entry || at < 0) throw new Error(`${name} is not a part of the Temporal cluster`);
      const old = o.processes[at]!;
      if (restart.kill) {
        old.kill('SIGKILL');
        await old.exited;
      } else await old.stop(15_000);
      await waitUntil(async () => !(await portOpen(LOCALHOST, entry.port)), { what: `port ${entry.port} to close`, timeoutMs: 15_000 });
      await new Promise((r) => setTimeout(r, restart.downMs ?? 0));
      const fresh = o.spawn(entry.spec);
      o.processes[at] = fresh;
      if (name === pgSpec.name) await pgAnswers(fresh);
      else await waitForPort(LOCALHOST, entry.port, { proc: fresh, timeoutMs: o.timeoutMs, what: name });
      await namespaceAnswers(undefined, undefined);
    },
  };
}
