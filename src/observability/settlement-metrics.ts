import { Gauge, Histogram, type Registry } from 'prom-client';
import { AgeGauge } from './age-gauge.js';

/** The steps of a batch the shard workflow runs as activities, timed each. */
export const BATCH_STEPS = ['submit', 'confirm', 'end', 'notify'] as const;

/** Settlement's pace: how long money waits, from capture to CONFIRMED and in the queues. */
export function settlementMetrics(registry: Registry) {
  const m = {
    captureToConfirmed: new Histogram({
      name: 'x402_capture_to_confirmed_seconds',
      help: "From a payment's capture to its batch recorded CONFIRMED, by shard",
      labelNames: ['shard'],
      buckets: [1, 2, 5, 10, 15, 20, 30, 45, 60, 120, 300, 600, 1800],
      registers: [registry],
    }),
    oldestQueuedAge: new AgeGauge(registry, {
      name: 'x402_settlement_oldest_queued_age_seconds',
      help: "Age of the oldest payment waiting in a shard's settlement queue (0 when empty), by shard; its capture time is sampled, the age grows between samples",
      label: 'shard',
    }),
    batchRetrying: new AgeGauge(registry, {
      name: 'x402_settlement_batch_retrying_seconds',
      help: "How long the batch a shard has in flight has been retrying (its transaction reverted or dropped) without confirming, by shard; 0 when none is",
      label: 'shard',
      staleAfterMs: 120_000,
    }),
    batchSteps: new Histogram({
      name: 'x402_batch_step_seconds',
      help: 'Duration of each attempt of a batch step (submit, confirm, end, notify), by step and outcome (ok, error)',
      labelNames: ['step', 'outcome'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    batchWindow: new Gauge({ name: 'x402_settlement_batch_window_seconds', help: 'BATCH_MAX_WAIT_MS: how long the oldest payment waits before its batch closes', registers: [registry] }),
    backlogLimit: new Gauge({ name: 'x402_settlement_backlog_limit', help: 'SETTLEMENT_MAX_BACKLOG: queued payments past which captures are shed', registers: [registry] }),
  };
  for (const step of BATCH_STEPS) for (const outcome of ['ok', 'error']) m.batchSteps.zero({ step, outcome });
  return m;
}
export type SettlementMetrics = ReturnType<typeof settlementMetrics>;
