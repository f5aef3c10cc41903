import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics. Each process (API, worker) has its own registry and serves it itself;
 * names are prefixed x402_ and labels stay low-cardinality (no ids, never secrets).
 */
/** Every command a process sends to the store, by command name (find, insert, update, ...). */
export function storeCommandCounter(registry: Registry): (commandName: string, collection: string) => void {
  const counter = new Counter({ name: 'x402_store_commands_total', help: 'Commands sent to the store, by command and collection', labelNames: ['command', 'collection'], registers: [registry] });
  return (command, collection) => counter.inc({ command, collection });
}

export function createRegistry(service: 'api' | 'worker'): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: 'x402_process_' });
  return registry;
}

export function apiMetrics(registry: Registry) {
  return {
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
}
export type ApiMetrics = ReturnType<typeof apiMetrics>;

export function workerMetrics(registry: Registry) {
  return {
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
      help: 'settleBatch outcomes: confirmed, requeued (revert or dropped)',
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
      help: 'Business failures recorded by workflows (payment FAILED, repayment FAILED), by kind',
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
  };
}
export type WorkerMetrics = ReturnType<typeof workerMetrics>;
