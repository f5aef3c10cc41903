import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { baseUrl, loadEnv, mcpUrl, publicOrigin, type Env } from '../../src/config/env.js';
import { dataDir as resolveDataDir, projectRoot } from '../../src/config/paths.js';
import { parseHostPort, stackNodeOptions } from './args.js';
import { ensureDeployment, type ChainSetup } from './deployment.js';
import { ensureDevMerchantJwt, type DevMerchantJwt } from './devkeys.js';
import { ensureSecretsKeyFile } from '../../src/store/secret-box.js';
import { startInfra, type Infra, type TemporalRestart } from './infra.js';
import { spawnManaged, waitForHttp, type ExitInfo, type ManagedProcess } from './processes.js';
import { openApiListener } from './api-listener.js';
import { processArgs } from './entries.js';

export interface StackOptions {
  /** Where settings come from; children inherit it plus the stack's own settings. Default process.env. */
  source?: NodeJS.ProcessEnv;
  /** Children's output to <DATA_DIR>/logs/<name>.log instead of the terminal. */
  quiet?: boolean;
  /** No Temporal Web UI. */
  headless?: boolean;
  log?: (message: string) => void;
  signal?: AbortSignal;
  readyTimeoutMs?: number;
  /** A process we started died without being asked to (after start-up; during start-up startStack rejects). */
  onUnexpectedExit?: (name: string, info: ExitInfo) => void;
  /**
   * The RPC URL the worker and the API get instead of the node's own (e.g. a fault-injecting proxy
   * in front of it); the stack itself still deploys and probes against the node directly.
   */
  childRpcUrl?: string;
}

export interface StackUrls {
  origin: string;
  baseUrl: string;
  mcpUrl: string;
  health: string;
  temporalAddress: string;
  temporalUi?: string;
  mongoUri: string;
  /** The node itself; the children use env.RPC_URL, which differs when StackOptions.childRpcUrl is set. */
  rpcUrl: string;
}

export interface StackHandle {
  /** The children's environment (the worker's; the API gets the same minus SETTLER_PRIVATE_KEY). */
  env: Record<string, string>;
  config: Env;
  urls: StackUrls;
  dataDir: string;
  chain: ChainSetup;
  deployment: ChainSetup['deployment'];
  devJwt: DevMerchantJwt;
  infra: Infra;
  readonly worker: ManagedProcess;
  readonly api: ManagedProcess;
  /** Every process of ours now running, by its part name (temporal, ferretdb or mongod, anvil, worker, api). */
  parts(): ManagedProcess[];
  /**
   * Starts a part again on its data and port, after it died (or kills it first if it still runs);
   * resolves once it answers. The others reconnect by themselves.
   */
  restartPart(name: string): Promise<void>;
  restartWorker(): Promise<void>;
  killWorker(signal?: NodeJS.Signals): Promise<ExitInfo>;
  /** See Infra.restartTemporal: the worker and the API keep running and must reconnect by themselves. */
  restartTemporal(opts?: TemporalRestart): Promise<void>;
  /** See Infra.restartStore: the worker and the API keep running and must reconnect by themselves. */
  restartStore(opts?: TemporalRestart): Promise<void>;
  stop(): Promise<void>;
}

function definedOnly(source: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(source).filter((e): e is [string, string] => e[1] !== undefined));
}

function probeHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}

/** Infra, contracts, dev keys, then the worker and the API; everything a run of the product needs. */
export async function startStack(options: StackOptions = {}): Promise<StackHandle> {
  const source = options.source ?? process.env;
  const config = loadEnv(source);
  const log = options.log ?? ((m: string) => console.log(m));
  const dataDir = resolveDataDir(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const timeoutMs = options.readyTimeoutMs ?? 180_000;
  const quietLog = (name: string) => (options.quiet ? join(dataDir, 'logs', `${name}.log`) : undefined);

  let started = false;
  const startFailure = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, startFailure.signal]) : startFailure.signal;
  const unexpected = (name: string, info: ExitInfo) => {
    if (started) options.onUnexpectedExit?.(name, info);
    else startFailure.abort(new Error(`${name} exited during start-up (${info.signal ?? `code ${info.code}`})`));
  };

  const infra = await startInfra({
    dataDir,
    temporal: {
      port: parseHostPort(config.TEMPORAL_ADDRESS).port,
      uiPort: config.TEMPORAL_UI_PORT,
      headless: options.headless ?? false,
      namespace: config.TEMPORAL_NAMESPACE,
      cliPath: config.TEMPORAL_CLI_PATH,
      topology: config.TEMPORAL_TOPOLOGY,
    },
    mongo: { uri: config.MONGODB_URI, port: config.MONGODB_PORT, synchronous: config.FERRETDB_SQLITE_SYNCHRONOUS },
    chain: { rpcUrl: config.RPC_URL, port: config.ANVIL_PORT, chainId: config.CHAIN_ID, blockTimeSeconds: config.ANVIL_BLOCK_TIME_SECONDS },
    quiet: options.quiet ?? false,
    log,
    signal,
    readyTimeoutMs: timeoutMs,
    onUnexpectedExit: unexpected,
  });

  const children: ManagedProcess[] = [];
  try {
    const chain = await ensureDeployment({ env: config, rpcUrl: infra.rpcUrl, ownsAnvil: infra.ownsAnvil, dataDir, log });
    ensureSecretsKeyFile(dataDir);
    const devJwt = await ensureDevMerchantJwt(join(dataDir, 'dev-merchant-jwt.json'), `http://127.0.0.1:${config.API_PORT}/dev-issuer`);
    const ownJwt = !config.MERCHANT_JWT_PUBLIC_JWK && !config.MERCHANT_JWT_JWKS_URL;

    const env: Record<string, string> = {
      ...definedOnly(source),
      DATA_DIR: dataDir,
      MONGODB_URI: infra.mongoUri,
      RPC_URL: options.childRpcUrl ?? infra.rpcUrl,
      TEMPORAL_ADDRESS: infra.temporalAddress,
      SETTLEMENT_CONTRACT_ADDRESS: chain.settlement,
      ASSET_ADDRESS: chain.asset,
      DEPLOY_BLOCK: chain.deployBlock,
      SETTLER_PRIVATE_KEY: chain.settlerPrivateKey,
      SETTLER_ADDRESS: chain.settlerAddress,
      NODE_OPTIONS: stackNodeOptions(source.NODE_OPTIONS),
      ...(ownJwt ? { MERCHANT_JWT_ISSUER: devJwt.issuer, MERCHANT_JWT_PUBLIC_JWK: JSON.stringify(devJwt.publicJwk) } : {}),
    };
    const { SETTLER_PRIVATE_KEY: _key, ...apiEnv } = env;
    const origin = publicOrigin(config);
    const health = `http://${probeHost(config.API_HOST)}:${config.API_PORT}/api/v1/facilitator/health`;
    const workerArgs = processArgs('worker');
    const apiArgs = processArgs('api');

    const spawnChild = (name: string, args: string[], childEnv: Record<string, string>, inheritFds?: number[]) => {
      const p = spawnManaged({ name, command: process.execPath, args, env: childEnv, cwd: projectRoot(), logFile: quietLog(name), ...(inheritFds ? { inheritFds } : {}) });
      p.onUnexpectedExit((info) => unexpected(name, info));
      children.push(p);
      return p;
    };
    const startWorker = async () => {
      const p = spawnChild('worker', workerArgs, env);
      await p.waitForLine('worker ready', timeoutMs, signal);
      return p;
    };

    const startApi = async () => {
      const listener = await openApiListener(config.API_HOST, config.API_PORT, config.API_LISTEN_BACKLOG);
      const { inheritFds, API_LISTEN_FDS } = listener.handOver(config.API_ACCEPT_HANDLES);
      let p: ManagedProcess;
      try {
        p = spawnChild('api', apiArgs, { ...apiEnv, API_LISTEN_FDS }, inheritFds);
      } finally {
        listener.close(); // the child holds its own duplicates; ours must not accept
      }
      await waitForHttp(health, { proc: p, timeoutMs, signal, what: `the API health check at ${health}` });
      return p;
    };

    let [worker, api] = await Promise.all([startWorker(), startApi()]);
    const restartWorker = async () => {
      await worker.stop(15_000);
      worker = await startWorker();
    };
    started = true;

    let stopping: Promise<void> | undefined;
    return {
      env,
      config,
      urls: {
        origin,
        baseUrl: baseUrl(config),
        mcpUrl: mcpUrl(config),
        health,
        temporalAddress: infra.temporalAddress,
        ...(infra.temporalUiUrl ? { temporalUi: infra.temporalUiUrl } : {}),
        mongoUri: infra.mongoUri,
        rpcUrl: infra.rpcUrl,
      },
      dataDir,
      chain,
      deployment: chain.deployment,
      devJwt,
      infra,
      get worker() {
        return worker;
      },
      get api() {
        return api;
      },
      parts: () => [...infra.processes, worker, api],
      async restartPart(name: string) {
        if (name === 'worker') return restartWorker();
        if (name === 'api') {
          await api.stop(15_000);
          api = await startApi();
          return;
        }
        const restart = { kill: true };
        if (name === 'temporal') return infra.restartTemporal(restart);
        if (name === 'anvil') return infra.restartChain(restart);
        if (name === infra.mongoKind) return infra.restartStore(restart);
        if (infra.cluster?.partNames.includes(name)) return infra.cluster.restart(name, restart);
        throw new Error(`${name} is not a part of this stack`);
      },
      restartWorker,
      async killWorker(sig: NodeJS.Signals = 'SIGKILL') {
        worker.kill(sig);
        return worker.exited;
      },
      restartTemporal: (opts) => infra.restartTemporal(opts),
      restartStore: (opts) => infra.restartStore(opts),
      stop() {
        stopping ??= (async () => {
          await Promise.all([api.stop(15_000), worker.stop(15_000)]);
          await infra.stop();
        })();
        return stopping;
      },
    };
  } catch (err) {
    await Promise.all(children.map((c) => c.stop(10_000)));
    await infra.stop();
    throw err;
  }
}
