import { ConfigError, loadEnv } from '../../src/config/env.js';
import { redactUri } from './args.js';
import { startStack, type StackHandle } from './stack.js';
import { StackSupervisor } from './supervisor.js';
import { formatBox, observabilityRows } from './summary.js';
import { startReplicas, type Replicas } from './cluster/replicas.js';
import { supervisedWithReplicas } from './cluster/supervised.js';
import { parseTopologyFlag } from './cluster/topology-flag.js';

const log = (m: string) => process.stdout.write(`${'stack'.padEnd(9)}| ${m}\n`);

function summary(s: StackHandle, replicas: Replicas | undefined): string {
  const cluster = s.infra.cluster;
  const rows: [string, string][] = [
    ['API base URL', s.urls.baseUrl],
    ['MCP URL', s.urls.mcpUrl],
    ['Temporal UI', s.urls.temporalUi ?? '(disabled)'],
    ['Temporal', `${s.urls.temporalAddress} (namespace ${s.config.TEMPORAL_NAMESPACE})`],
    ['MongoDB', `${redactUri(s.urls.mongoUri)} (${s.infra.mongoKind}, db ${s.config.MONGODB_DB})`],
    ['RPC', `${s.urls.rpcUrl} (chain ${s.config.CHAIN_ID}${s.infra.ownsAnvil ? ', anvil' : ''})`],
    ['Settlement', s.chain.settlement],
    ['Asset (USDC)', s.chain.asset],
    ['Settler', s.chain.settlerAddress],
    ...observabilityRows(s.urls.origin, s.config.WORKER_METRICS_PORT),
    ['Data dir', s.dataDir],
    ...(cluster && replicas
      ? ([
          ['Topology', `cluster: ${cluster.partNames.join(', ')} (PostgreSQL 127.0.0.1:${cluster.postgresPort})`],
          ['Second API', replicas.apiBaseUrl],
          ['Second settler', replicas.settlerAddress],
        ] as [string, string][])
      : []),
  ];
  return [
    formatBox('credit-facilitator is running', rows),
    'Create a merchant:  npm run admin -- merchant create --name "Demo" --payout 0x...',
    'Stop: Ctrl-C',
  ].join('\n');
}

async function main(): Promise<void> {
  const flag = parseTopologyFlag(process.argv.slice(2));
  if (flag.error) {
    process.stderr.write(`${flag.error}\n`);
    process.exit(2);
  }
  if (flag.topology) process.env.TEMPORAL_TOPOLOGY = flag.topology;
  try {
    loadEnv();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  const abort = new AbortController();
  let stack: StackHandle | undefined;
  let replicas: Replicas | undefined;
  let shuttingDown = false;
  let signals = 0;

  let supervisor: StackSupervisor | undefined;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    supervisor?.stop();
    try {
      await replicas?.stop();
      await stack?.stop();
      log('stopped');
    } catch (err) {
      log(`error while stopping: ${err instanceof Error ? err.message : String(err)}`);
      code = code || 1;
    }
    process.exit(code);
  };

  const onSignal = (sig: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log('forced exit');
      process.exit(130);
    }
    log(`${sig}: stopping (press Ctrl-C again to force)`);
    abort.abort(new Error(`interrupted by ${sig}`));
    if (stack) void shutdown(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const started = Date.now();
  try {
    stack = await startStack({
      log,
      signal: abort.signal,
      // A part that dies after start-up is started again; only a crash loop stops everything.
      onUnexpectedExit: (name, info) => supervisor?.partExited(name, info),
    });
    // The cluster topology runs a second API (on API_PORT + 1) and a second worker with its own settler
    // key, supervised as the stack's own parts are.
    if (stack.infra.cluster) {
      replicas = await startReplicas(stack, { apiPort: stack.config.API_PORT + 1, quiet: false, onUnexpectedExit: (name, info) => supervisor?.partExited(name, info) });
    }
  } catch (err) {
    if (abort.signal.aborted) {
      log('stopped');
      process.exit(0);
    }
    process.stderr.write(`start failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  if (abort.signal.aborted) return shutdown(0);
  supervisor = new StackSupervisor(supervisedWithReplicas(stack, replicas), {
    log,
    giveUp: (reason) => {
      log(reason);
      void shutdown(1);
    },
  });
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.stdout.write(`\n${summary(stack, replicas)}\n\n`);
}

void main();
