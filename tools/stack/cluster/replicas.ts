import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { projectRoot } from '../../../src/config/paths.js';
import { allowSettlerOnDevChain } from '../deployment.js';
import { processArgs } from '../entries.js';
import { spawnManaged, waitForHttp, type ExitInfo, type ManagedProcess, type SpawnOptions } from '../processes.js';
import type { StackHandle } from '../stack.js';

/**
 * The second API and the second worker of the cluster topology: the stack's own are the first.
 * Each worker settles with a key of its own (both allowed by the contract), as two workers on two
 * machines would; the APIs share everything but their port.
 */
export interface Replicas {
  apiBaseUrl: string;
  /** api-2 as it runs now (a restart replaces it). */
  readonly api: ManagedProcess;
  /** worker-2 as it runs now (a restart replaces it). */
  readonly worker: ManagedProcess;
  settlerAddress: Address;
  /** api-2 and worker-2, for the supervisor (tools/stack/cluster/supervised.ts). */
  parts(): ManagedProcess[];
  /** Starts api-2 or worker-2 again on the same settings (killing it first if it still runs); resolves once it answers. */
  restart(name: string): Promise<void>;
  stop(): Promise<void>;
}

export const REPLICA_NAMES = ['api-2', 'worker-2'] as const;
type ReplicaName = (typeof REPLICA_NAMES)[number];

export interface ReplicaOptions {
  apiPort: number;
  quiet: boolean;
  timeoutMs?: number;
  /** A replica died without being asked to, after start-up: the stack's supervisor hears of it here. */
  onUnexpectedExit?: (name: string, info: ExitInfo) => void;
}

/** The second worker's key, made once under <dataDir>/cluster (mode 0600) so a restart keeps its settler. */
function secondSettlerKey(dataDir: string): Hex {
  const file = join(dataDir, 'cluster', 'settler-2.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim() as Hex;
  const key = generatePrivateKey();
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/**
 * Funds the key for gas and allows it on the contract, signed by the contract's owner (anvil's dev
 * key, which deployed it). Only on our own anvil: elsewhere the owner's key is not ours to hold.
 */
export async function authoriseSettler(stack: StackHandle, key: Hex): Promise<Address> {
  if (!stack.infra.ownsAnvil) throw new Error('a second settler is allowed on the contract by its owner: only done here on the stack\'s own anvil');
  return allowSettlerOnDevChain({ rpcUrl: stack.urls.rpcUrl, chainId: stack.config.CHAIN_ID, settlement: stack.chain.settlement }, key);
}

/** Starts api-2 on `apiPort` and worker-2 with its own settler key; resolves once both are ready. */
export async function startReplicas(stack: StackHandle, o: ReplicaOptions): Promise<Replicas> {
  const timeoutMs = o.timeoutMs ?? 120_000;
  const key = secondSettlerKey(stack.dataDir);
  const settlerAddress = await authoriseSettler(stack, key);
  const logFile = (name: string) => (o.quiet ? join(stack.dataDir, 'logs', `${name}.log`) : undefined);
  const { SETTLER_PRIVATE_KEY: _key, ...apiEnv } = stack.env;
  const host = stack.config.API_HOST === '0.0.0.0' ? '127.0.0.1' : stack.config.API_HOST;
  const origin = `http://${host}:${o.apiPort}`;
  const specs: Record<ReplicaName, { spawn: SpawnOptions; ready: (p: ManagedProcess) => Promise<void> }> = {
    'api-2': {
      spawn: { name: 'api-2', command: process.execPath, args: processArgs('api'), env: { ...apiEnv, API_PORT: String(o.apiPort) }, cwd: projectRoot(), logFile: logFile('api-2') },
      ready: (p) => waitForHttp(`${origin}/api/v1/facilitator/health`, { proc: p, timeoutMs, what: 'api-2 health' }),
    },
    // The stack's worker holds WORKER_METRICS_PORT: the second one serves none.
    'worker-2': {
      spawn: {
        name: 'worker-2',
        command: process.execPath,
        args: processArgs('worker'),
        env: { ...stack.env, SETTLER_PRIVATE_KEY: key, SETTLER_ADDRESS: settlerAddress, WORKER_METRICS_PORT: '0' },
        cwd: projectRoot(),
        logFile: logFile('worker-2'),
      },
      ready: (p) => p.waitForLine('worker ready', timeoutMs),
    },
  };

  let started = false;
  let stopped = false;
  const running = new Map<ReplicaName, ManagedProcess>();
  const launch = (name: ReplicaName) => {
    const p = spawnManaged(specs[name].spawn);
    // During start-up the readiness wait sees the exit; after it, the supervisor does.
    p.onUnexpectedExit((info) => {
      if (started && !stopped) o.onUnexpectedExit?.(name, info);
    });
    running.set(name, p);
    return p;
  };
  const stopAll = (timeout: number) => Promise.all([...running.values()].map((p) => p.stop(timeout)));

  try {
    await Promise.all(REPLICA_NAMES.map((name) => specs[name].ready(launch(name))));
  } catch (err) {
    await stopAll(10_000);
    throw err;
  }
  started = true;
  return {
    apiBaseUrl: `${origin}/api/v1`,
    get api() {
      return running.get('api-2')!;
    },
    get worker() {
      return running.get('worker-2')!;
    },
    settlerAddress,
    parts: () => [...running.values()],
    async restart(name) {
      const old = running.get(name as ReplicaName);
      if (!old) throw new Error(`${name} is not a replica (${REPLICA_NAMES.join(', ')})`);
      if (stopped) throw new Error(`the replicas are stopping: ${name} is not restarted`);
      await old.stop(15_000);
      if (stopped) return;
      const fresh = launch(name as ReplicaName);
      await specs[name as ReplicaName].ready(fresh);
    },
    async stop() {
      stopped = true;
      await stopAll(15_000);
    },
  };
}
