import { NativeConnection, Worker } from '@temporalio/worker';
import { getAddress } from 'viem';
import { createActivities } from '../activities/index.js';
import { makeChainClients } from '../src/chain/clients.js';
import type { ChainContext } from '../src/chain/context.js';
import { NonceManager } from '../src/chain/nonce-manager.js';
import { isAllowedSettler } from '../src/chain/settler-check.js';
import { loadEnv, type Env } from '../src/config/env.js';
import { createLogger, type Logger } from '../src/observability/logger.js';
import { rpcMethodLabel, type RpcErrorKind } from '../src/observability/chain-metrics.js';
import { createRegistry, storeCommandCounter, storeCommandTimer, workerMetrics, type WorkerMetrics } from '../src/observability/metrics.js';
import { serveMetrics } from '../src/observability/metrics-server.js';
import { profileCpuIfAsked } from '../src/observability/cpu-profile.js';
import { connectStore } from '../src/store/mongo.js';
import { SecretBox } from '../src/store/secret-box.js';
import { startStoreWatchdog } from '../src/store/store-watchdog.js';
import { webhookDestinationPolicy } from '../src/webhooks/url-policy.js';
import { Client } from '@temporalio/client';
import { CAPTURE_SWEEPER_WORKFLOW_ID, settlementShardWorkflowId } from '../src/temporal/definitions.js';
import { tracedClientInterceptors, tracedWorkerOptions } from './tracing.js';
import { startTracing } from '../src/observability/tracing-setup.js';
import { lowerCpuPriority } from './cpu-priority.js';
import { BacklogPriority } from './backlog-priority.js';
import { resyncInBackground } from './resync-in-background.js';
import { installTemporalRuntime } from './temporal-runtime.js';
import { startMetricsSampler } from '../src/settlement/metrics-sampler.js';

function chainContext(env: Env, logger: Logger, metrics: WorkerMetrics): ChainContext {
  if (!env.RPC_URL || !env.SETTLER_PRIVATE_KEY || !env.SETTLEMENT_CONTRACT_ADDRESS || !env.ASSET_ADDRESS) {
    throw new Error('RPC_URL, SETTLER_PRIVATE_KEY, SETTLEMENT_CONTRACT_ADDRESS and ASSET_ADDRESS must be set (npm start sets them)');
  }
  const onRpc = (method: string, failed?: RpcErrorKind) => {
    const label = rpcMethodLabel(method);
    metrics.chain.rpcRequests.inc({ method: label });
    if (failed) metrics.chain.rpcErrors.inc({ method: label, kind: failed });
  };
  const clients = makeChainClients({ rpcUrl: env.RPC_URL, chainId: env.CHAIN_ID, privateKey: env.SETTLER_PRIVATE_KEY as `0x${string}`, onRpc });
  if (!clients.walletClient || !clients.account) throw new Error('settler account missing');
  return {
    publicClient: clients.publicClient,
    walletClient: clients.walletClient,
    account: clients.account,
    nonces: new NonceManager(clients.publicClient, clients.walletClient, {
      replaceAfterMs: env.TX_REPLACE_AFTER_MS,
      ...(env.TX_MAX_FEE_GWEI > 0 ? { maxFeePerGas: BigInt(env.TX_MAX_FEE_GWEI) * 10n ** 9n } : {}),
      onReplaced: (e) => {
        metrics.chain.txReplaced.inc();
        logger.warn('stuck settler transaction replaced', { nonce: e.nonce, replaced: e.replaced, by: e.by, maxFeePerGas: e.maxFeePerGas.toString() });
      },
      onResent: (e) => logger.warn('settler transactions the node had lost handed to it again', { nonces: e.nonces, transactions: e.hashes, filled: e.filled }),
      onError: (err) => logger.warn('settler nonce check failed', { error: err }),
    }),
    deployment: {
      chainId: env.CHAIN_ID,
      settlement: getAddress(env.SETTLEMENT_CONTRACT_ADDRESS),
      asset: getAddress(env.ASSET_ADDRESS),
      assetDecimals: 6,
      assetName: 'USD Coin',
      assetVersion: '2',
      settler: clients.account.address,
      deployBlock: env.DEPLOY_BLOCK,
    },
  };
}

async function main() {
  profileCpuIfAsked('worker');
  const env = loadEnv();
  const logger = createLogger(env.LOG_LEVEL, { service: 'worker' });
  // Before any thread of Temporal's core or of the workflows starts, so that they inherit it.
  const priority = lowerCpuPriority(env.WORKER_CPU_NICE);
  if (priority.scope === 'none' && priority.reason) logger.warn('worker CPU priority left as it was', { ...priority });
  else if (priority.reason) logger.warn('worker CPU priority lowered only in part', { ...priority });
  else if (priority.scope !== 'none') logger.info('worker CPU priority lowered', { ...priority });
  const tracing = await startTracing(env, 'credit-facilitator-worker');
  if (tracing) logger.info('tracing on', { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL });
  const registry = createRegistry('worker');
  const metrics = workerMetrics(registry);
  metrics.trackShards(env.SETTLEMENT_SHARDS);
  metrics.settlement.batchWindow.set(env.BATCH_MAX_WAIT_MS / 1000);
  metrics.settlement.backlogLimit.set(env.SETTLEMENT_MAX_BACKLOG);
  metrics.chain.confirmationsRequired.set(Math.max(1, env.CONFIRMATIONS));
  const temporalRuntime = installTemporalRuntime(metrics.temporal);
  const countStoreCommand = storeCommandCounter(registry);
  const timeStoreCommand = storeCommandTimer(registry);
  const store = await connectStore(env.MONGODB_URI ?? `mongodb://127.0.0.1:${env.MONGODB_PORT}/`, env.MONGODB_DB, {
    onCommand: countStoreCommand,
    onCommandDone: timeStoreCommand,
    waitMs: 60_000,
    onRetry: (err) => logger.warn('store not answering yet; retrying', { error: err }),
  });
  const storeUri = env.MONGODB_URI ?? `mongodb://127.0.0.1:${env.MONGODB_PORT}/`;
  const storeWatchdog = startStoreWatchdog(store, { uri: storeUri, logger, onCommand: countStoreCommand, onCommandDone: timeStoreCommand });
  const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });
  // The activities' client (a signal-with-start per settled payment) shares the worker's native connection: no second gRPC stack in JS.
  const clientInterceptors = tracedClientInterceptors(tracing);
  const temporal = new Client({ connection, namespace: env.TEMPORAL_NAMESPACE, ...(clientInterceptors ? { interceptors: clientInterceptors } : {}) });
  // A busy port costs the metrics endpoint, never the worker.
  const metricsServer =
    env.WORKER_METRICS_PORT > 0
      ? await serveMetrics(registry, env.WORKER_METRICS_PORT, env.METRICS_TOKEN).catch((err: unknown) => {
          logger.warn('worker metrics endpoint not started', { port: env.WORKER_METRICS_PORT, error: err });
          return null;
        })
      : null;
  const chain = chainContext(env, logger, metrics);
  chain.nonces?.start();
  const sampler = startMetricsSampler({ store, chain, metrics, shards: env.SETTLEMENT_SHARDS, log: (msg, fields) => logger.warn(msg, fields) }, env.WORKER_METRICS_SAMPLE_MS);
  // A key the contract does not allow would revert every batch this worker picks up (NotSettler);
  // say so at start instead of only in retried activities. Not fatal: setSettler may come later.
  isAllowedSettler(chain)
    .then((allowed) => {
      if (!allowed) {
        logger.error('settler key not allowed by the settlement contract: every batch this worker submits will revert NotSettler; call setSettler(settler, true) from the owner', {
          settler: chain.deployment.settler,
          contract: chain.deployment.settlement,
        });
      }
    })
    .catch((err: unknown) => logger.warn('settler check failed; settlement will tell', { error: err }));
  const settings = {
    maxPayments: env.BATCH_MAX_PAYMENTS,
    minPayments: env.BATCH_MIN_PAYMENTS,
    maxWaitMs: env.BATCH_MAX_WAIT_MS,
    maxAttempts: env.BATCH_MAX_ATTEMPTS,
    confirmations: env.CONFIRMATIONS,
    maxPaymentsUnderBacklog: env.BATCH_MAX_PAYMENTS_UNDER_BACKLOG,
    shardPollMs: env.SETTLEMENT_POLL_MS,
    notifySpreadMs: env.SETTLEMENT_NOTIFY_SPREAD_MS,
    taskQueue: env.SETTLEMENT_TASK_QUEUE,
  };
  // Only a worker that lowered its own autogroup can give it back; a shared session's group is not ours.
  const backlogPriority =
    priority.scope === 'autogroup' ? new BacklogPriority({ nice: priority.nice, boostAt: env.WORKER_CPU_NICE_BACKLOG, log: (msg, fields) => logger.info(msg, fields) }) : undefined;
  const activities = createActivities({
    ...(backlogPriority ? { onBacklog: (shard: number, pending: number) => backlogPriority.observe(shard, pending) } : {}),
    metrics,
    store,
    temporal,
    taskQueue: env.TEMPORAL_TASK_QUEUE,
    chain,
    shards: env.SETTLEMENT_SHARDS,
    webhooks: { ...webhookDestinationPolicy(env), secrets: SecretBox.of(env), retry: { initialMs: env.WEBHOOK_RETRY_INITIAL_MS, maxMs: env.WEBHOOK_RETRY_MAX_MS } },
    settings,
  });
  const workerOn = (taskQueue: string) => Worker.create({ connection, namespace: env.TEMPORAL_NAMESPACE, taskQueue, ...tracedWorkerOptions(tracing), activities });
  const worker = await workerOn(env.TEMPORAL_TASK_QUEUE);
  // The shards on a queue of their own: their workflow tasks (one after each step of a round) ran on
  // the same workflow thread as every payment's, and at 0.8x of peak waited 133-163 ms each behind them.
  const settlementWorker = await workerOn(env.SETTLEMENT_TASK_QUEUE);

  // The legacy single batcher is started only by payments captured before settlement shards.
  for (let shard = 0; shard < env.SETTLEMENT_SHARDS; shard++) {
    await temporal.workflow
      .start('settlementShardWorkflow', {
        workflowId: settlementShardWorkflowId(shard),
        taskQueue: env.SETTLEMENT_TASK_QUEUE,
        args: [{ shard, shards: env.SETTLEMENT_SHARDS }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      })
      .catch((err: unknown) => logger.warn('settlement shard start deferred', { shard, error: err }));
  }
  await temporal.workflow
    .start('captureSweeperWorkflow', {
      workflowId: CAPTURE_SWEEPER_WORKFLOW_ID,
      taskQueue: env.TEMPORAL_TASK_QUEUE,
      args: [{ olderThanSeconds: env.CAPTURE_SWEEP_AFTER_SECONDS, intervalSeconds: env.CAPTURE_SWEEP_INTERVAL_SECONDS }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    })
    .catch((err: unknown) => logger.warn('capture sweeper start deferred', { error: err }));

  const stop = (signal: string) => {
    logger.info('worker stopping', { signal });
    worker.shutdown();
    settlementWorker.shutdown();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));

  resyncInBackground(
    { store, chain, temporal, taskQueue: env.TEMPORAL_TASK_QUEUE, shards: env.SETTLEMENT_SHARDS, metrics, settings, webhooks: { retry: { initialMs: env.WEBHOOK_RETRY_INITIAL_MS, maxMs: env.WEBHOOK_RETRY_MAX_MS } } },
    logger,
  );

  process.stdout.write('worker ready\n');
  logger.info('worker ready', { taskQueue: env.TEMPORAL_TASK_QUEUE });
  await Promise.all([worker.run(), settlementWorker.run()]);
  metricsServer?.close();
  sampler.stop();
  temporalRuntime.stop();
  chain.nonces?.stop();
  storeWatchdog.stop();
  await Promise.allSettled([store.close(), connection.close(), tracing?.shutdown()]);
}

main().catch((err: unknown) => {
  process.stderr.write(`worker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
