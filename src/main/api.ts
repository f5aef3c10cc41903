import type { JWK } from 'jose';
import { createMerchantJwtVerifier } from '../auth/merchant-jwt.js';
import { loadEnv } from '../config/env.js';
import { createLogger } from '../observability/logger.js';
import { connectStore } from '../store/mongo.js';
import { startStoreWatchdog } from '../store/store-watchdog.js';
import { connectTemporal } from '../temporal/client.js';
import { createApp } from './api-app.js';
import { clientErrorHandler } from '../http/client-errors.js';
import { loadSettlementInfo } from '../chain/settlement-info.js';
import { loadOrCreateOAuthKeys } from '../store/oauth-keys.js';
import { loadOrCreateReceiptSigner } from '../settlement/signed-receipt.js';
import { apiMetrics, createRegistry, storeCommandCounter, storeCommandTimer } from '../observability/metrics.js';
import { BackgroundCaptureFinisher } from '../payments/finish-capture.js';
import { startSlotSweeper } from './slot-sweeper.js';
import { CaptureAdmission } from '../api/capture-admission.js';
import { shedCapturesEarly } from '../api/early-shed.js';
import { PaymentStatusCache } from '../payments/status-cache.js';
import { SettlementBoardReader } from '../payments/settlement-board.js';
import { statusWaitersFor } from '../payments/status-watch.js';
import { MerchantCache } from '../store/merchant-cache.js';
import { profileCpuIfAsked } from '../observability/cpu-profile.js';
import { recordAcceptTimes } from '../observability/phase-timer.js';
import { listenApi } from './listen.js';
import { startTracing } from '../observability/tracing-setup.js';

async function main() {
  profileCpuIfAsked('api');
  const env = loadEnv();
  const logger = createLogger(env.LOG_LEVEL, { service: 'api' });
  // Before the Temporal client and the routes are made: both ask whether tracing is on.
  const tracing = await startTracing(env, 'credit-facilitator-api');
  if (tracing) logger.info('tracing on', { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL });
  const registry = createRegistry('api');
  const countStoreCommand = storeCommandCounter(registry);
  const timeStoreCommand = storeCommandTimer(registry);
  const store = await connectStore(env.MONGODB_URI ?? `mongodb://127.0.0.1:${env.MONGODB_PORT}/`, env.MONGODB_DB, {
    onCommand: countStoreCommand,
    onCommandDone: timeStoreCommand,
    waitMs: 60_000,
    onRetry: (err) => logger.warn('store not answering yet; retrying', { error: err }),
  });
  const storeWatchdog = startStoreWatchdog(store, {
    uri: env.MONGODB_URI ?? `mongodb://127.0.0.1:${env.MONGODB_PORT}/`,
    logger,
    onCommand: countStoreCommand,
    onCommandDone: timeStoreCommand,
  });
  const temporal = await connectTemporal(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE);
  const settlement = await loadSettlementInfo(env);
  const verifyJwt = createMerchantJwtVerifier({
    issuer: env.MERCHANT_JWT_ISSUER ?? 'unset',
    audience: env.MERCHANT_JWT_AUDIENCE,
    ...(env.MERCHANT_JWT_JWKS_URL ? { jwksUrl: env.MERCHANT_JWT_JWKS_URL } : {}),
    ...(env.MERCHANT_JWT_PUBLIC_JWK ? { publicJwk: JSON.parse(env.MERCHANT_JWT_PUBLIC_JWK) as JWK } : {}),
  });
  const oauthKeys = await loadOrCreateOAuthKeys(store);
  const receiptSigner = await loadOrCreateReceiptSigner(store);
  const metrics = { registry, api: apiMetrics(registry) };
  const captureFinisher = new BackgroundCaptureFinisher({ temporal, taskQueue: env.TEMPORAL_TASK_QUEUE }, logger);
  const board = new SettlementBoardReader(store.c, env.SETTLEMENT_SHARDS);
  const captureAdmission = new CaptureAdmission(
    store.c,
    { maxInFlight: env.CAPTURE_MAX_IN_FLIGHT, merchantShare: env.CAPTURE_MERCHANT_SHARE, maxQueueMs: env.CAPTURE_MAX_QUEUE_MS, overloadQueueMs: env.CAPTURE_OVERLOAD_QUEUE_MS, ...(env.CAPTURE_THROUGHPUT_ALLOWANCE_MS === undefined ? {} : { throughputAllowanceMs: env.CAPTURE_THROUGHPUT_ALLOWANCE_MS }), targetLatencyMs: env.CAPTURE_TARGET_LATENCY_MS, maxBacklog: env.SETTLEMENT_MAX_BACKLOG, shards: env.SETTLEMENT_SHARDS },
    metrics.api,
    Date.now,
    board,
  );
  const statusCache = new PaymentStatusCache(undefined, board);
  const statusWaiters = statusWaitersFor({ store, env, statusCache, nowMs: Date.now }, logger);
  const app = createApp({
    env, store, temporal, verifyJwt, logger, settlement, oauthKeys, receiptSigner, metrics, captureFinisher, captureAdmission, statusCache, statusWaiters, merchantCache: new MerchantCache(env.MERCHANT_AUTH_CACHE_MS), nowMs: () => Date.now(),
  });
  const slotSweeper = startSlotSweeper(store.c, logger);
  const servers = listenApi(
    env,
    shedCapturesEarly(app.callback(), captureAdmission, { logger, metrics: metrics.api, serverTiming: env.SERVER_TIMING }),
    (server) => {
      server.on('clientError', clientErrorHandler(logger));
      if (env.SERVER_TIMING) recordAcceptTimes(server);
      server.keepAliveTimeout = 65_000;
      server.requestTimeout = 30_000;
    },
    () => logger.info('api listening', { url: `http://${env.API_HOST}:${env.API_PORT}/api/v1`, acceptHandles: servers.length }),
  );

  const shutdown = (signal: string) => {
    logger.info('api stopping', { signal });
    slotSweeper.stop();
    storeWatchdog.stop();
    statusWaiters.releaseAll(); // held long polls answer now, so the servers close without waiting out their waits
    void Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
      .then(() => captureFinisher.drain())
      .then(() => Promise.allSettled([store.close(), temporal.connection.close(), tracing?.shutdown()]))
      .then(() => process.exit(0));
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`api failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
