import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { chainMetrics } from './chain-metrics.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { settlementMetrics } from './settlement-metrics.js';
import { temporalMetrics } from './temporal-metrics.js';

/**
 * Prometheus metrics. Each process (API, worker) has its own registry and serves it itself;
 * names are prefixed x402_ and labels stay low-cardinality (no ids, never secrets).
 */
/** Every command a process sends to the store, by command name (find, insert, update, ...). */
export function storeCommandCounter(registry: Registry): (commandName: string, collection: string) => void {
  const counter = new Counter({ name: 'x402_store_commands_total', help: 'Commands sent to the store, by command and collection', labelNames: ['command', 'collection'], registers: [registry] });
  return (command, collection) => counter.inc({ command, collection });
}

/** The commands a process sends most; their latency series exist from the start. */
const COMMON_STORE_COMMANDS = ['find', 'insert', 'update', 'delete', 'findAndModify', 'aggregate', 'count', 'getMore'];

/** How long each store command took (answered or failed), by command name; no collection label, to keep the buckets few. */
export function storeCommandTimer(registry: Registry): (commandName: string, seconds: number) => void {
  const histogram = new Histogram({
    name: 'x402_store_command_duration_seconds',
    help: 'Store command latency from send to answer (or failure), by command',
    labelNames: ['command'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  for (const command of COMMON_STORE_COMMANDS) histogram.zero({ command });
  return (command, seconds) => histogram.observe({ command }, seconds);
}

export function createRegistry(service: 'api' | 'worker'): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: 'x402_process_' });
  return registry;
}

/** Capture outcomes and shed causes whose series exist from the start, so their rates do too. */
const CAPTURE_OUTCOMES = ['queued', 'replayed', 'PAYMENT_REJECTED', 'UNAVAILABLE', 'INTERNAL'];
const SHED_CAUSES = ['in_flight', 'backlog', 'merchant_share'];

export function apiMetrics(registry: Registry) {
  const m = {
    httpRequests: new Counter({
      name: 'x402_http_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'x402_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['route', 'method'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    paymentLongPolls: new Gauge({
      name: 'x402_payment_long_polls',
      help: 'Status polls (Prefer: wait) this API process holds now',
      registers: [registry],
    }),
    paymentLongPollsOverLimit: new Counter({
      name: 'x402_payment_long_polls_over_limit_total',
      help: 'Status polls that asked to wait but were answered at once: the process held PAYMENT_WAIT_MAX_WAITERS',
      registers: [registry],
    }),
    captures: new Counter({
      name: 'x402_captures_total',
      help: 'Capture outcomes: queued, replayed, or the error code (PAYMENT_REJECTED, IDEMPOTENCY_KEY_CONFLICT, ...)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    captureRejections: new Counter({
      name: 'x402_capture_rejections_total',
      help: 'Captures refused with PAYMENT_REJECTED, by invalidReason',
      labelNames: ['reason'],
      registers: [registry],
    }),
    verifyResults: new Counter({
      name: 'x402_verify_results_total',
      help: 'Verify verdicts: valid, or the invalidReason',
      labelNames: ['result'],
      registers: [registry],
    }),
    capturesShed: new Counter({
      name: 'x402_captures_shed_total',
      help: 'Captures answered 503 before any work because of overload, by cause (in_flight, backlog, merchant_share)',
      labelNames: ['cause'],
      registers: [registry],
    }),
    capturesInFlight: new Gauge({
      name: 'x402_captures_in_flight',
      help: 'Captures holding an admission slot (authenticated, body read) in this process',
      registers: [registry],
    }),
    mcpToolCalls: new Counter({
      name: 'x402_mcp_tool_calls_total',
      help: 'MCP tool calls by tool and outcome (ok, or the error code)',
      labelNames: ['tool', 'outcome'],
      registers: [registry],
    }),
  };
  for (const outcome of CAPTURE_OUTCOMES) m.captures.inc({ outcome }, 0);
  for (const cause of SHED_CAUSES) m.capturesShed.inc({ cause }, 0);
  return m;
}
export type ApiMetrics = ReturnType<typeof apiMetrics>;

const BATCH_OUTCOMES = ['confirmed', 'reverted', 'dropped'];
const FAILURE_KINDS = ['payment', 'repayment', 'refund'];

export function workerMetrics(registry: Registry) {
  const m = {
    batchSize: new Histogram({
      name: 'x402_batch_size',
      help: 'Payments per settleBatch transaction',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500],
      registers: [registry],
    }),
    batchEndSteps: new Histogram({
      name: 'x402_batch_end_step_seconds',
      help: "Each step of a settled batch's end (record, holds, ledger, webhooks, notify, dequeue), for all its payments at once",
      labelNames: ['step'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    settleLatency: new Histogram({
      name: 'x402_settle_latency_seconds',
      help: 'From settleBatch broadcast to confirmation at the configured depth',
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300],
      registers: [registry],
    }),
    gasUsed: new Counter({ name: 'x402_settlement_gas_used_total', help: 'Gas used by confirmed settleBatch transactions', registers: [registry] }),
    paymentsSettled: new Counter({ name: 'x402_payments_settled_total', help: 'Payments confirmed on-chain', registers: [registry] }),
    batches: new Counter({
      name: 'x402_batches_total',
      help: 'settleBatch confirmation outcomes: confirmed, reverted, dropped (the last two are retried)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    settlementBacklog: new Gauge({
      name: 'x402_settlement_backlog',
      help: 'Accepted payments waiting in a settlement shard queue, by shard',
      labelNames: ['shard'],
      registers: [registry],
    }),
    workflowFailures: new Counter({
      name: 'x402_workflow_failures_total',
      help: 'Business failures recorded by workflows (payment, repayment, refund FAILED), by kind',
      labelNames: ['kind'],
      registers: [registry],
    }),
    batchSetMismatches: new Counter({
      name: 'x402_batch_set_mismatches_total',
      help: "Shard steps refused because a batch's decided set differs from the payments its workflow holds, by shard",
      labelNames: ['shard'],
      registers: [registry],
    }),
    settlementHalts: new Counter({
      name: 'x402_settlement_halts_total',
      help: "Batches whose settled content on chain differs from their decided set: the shard stops at them, by shard",
      labelNames: ['shard'],
      registers: [registry],
    }),
    chain: chainMetrics(registry),
    settlement: settlementMetrics(registry),
    delivery: deliveryMetrics(registry),
    temporal: temporalMetrics(registry),
  };
  for (const outcome of BATCH_OUTCOMES) m.batches.inc({ outcome }, 0);
  for (const kind of FAILURE_KINDS) m.workflowFailures.inc({ kind }, 0);
  return {
    ...m,
    /** Puts every per-shard series at zero, for shards 0 to shards - 1. */
    trackShards(shards: number): void {
      for (let n = 0; n < shards; n++) {
        const shard = String(n);
        m.settlementBacklog.set({ shard }, 0);
        m.batchSetMismatches.inc({ shard }, 0);
        m.settlementHalts.inc({ shard }, 0);
        m.settlement.captureToConfirmed.zero({ shard });
        m.settlement.oldestQueuedAge.track(shard);
        m.settlement.batchRetrying.track(shard);
        m.chain.confirmationDepth.set({ shard }, 0);
      }
    },
  };
}
export type WorkerMetrics = ReturnType<typeof workerMetrics>;
