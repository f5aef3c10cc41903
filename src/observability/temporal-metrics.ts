import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A metric update from the Temporal worker's core (its buffered metrics), in seconds for durations. */
export interface CoreMetricUpdate {
  name: string;
  value: number;
  attributes: Record<string, unknown>;
}

/**
 * The Temporal worker's own task metrics, taken from its core (workers/temporal-runtime.ts) into
 * this registry: how long workflow and activity tasks wait for a worker and take in it.
 */
export function temporalMetrics(registry: Registry) {
  const m = {
    workflowTaskScheduleToStart: new Histogram({ name: 'x402_temporal_workflow_task_schedule_to_start_seconds', help: 'Workflow tasks: from scheduled to picked up by this worker', buckets: LATENCY_BUCKETS, registers: [registry] }),
    workflowTaskExecution: new Histogram({ name: 'x402_temporal_workflow_task_execution_seconds', help: 'Workflow tasks: time in this worker, by workflow type', labelNames: ['workflow_type'], buckets: LATENCY_BUCKETS, registers: [registry] }),
    workflowTaskFailures: new Counter({ name: 'x402_temporal_workflow_task_failures_total', help: 'Workflow tasks that failed in this worker (a bug or non-determinism; Temporal retries them)', registers: [registry] }),
    activityScheduleToStart: new Histogram({ name: 'x402_temporal_activity_schedule_to_start_seconds', help: 'Activity tasks: from scheduled to picked up by this worker', buckets: LATENCY_BUCKETS, registers: [registry] }),
    activityExecution: new Histogram({ name: 'x402_temporal_activity_execution_seconds', help: 'Activity tasks: time in this worker, by activity type', labelNames: ['activity_type'], buckets: [...LATENCY_BUCKETS, 60, 300], registers: [registry] }),
    taskSlotsAvailable: new Gauge({ name: 'x402_temporal_worker_task_slots_available', help: 'Free task slots of this worker, by worker type (WorkflowWorker, ActivityWorker, LocalActivityWorker)', labelNames: ['worker_type'], registers: [registry] }),
  };
  const label = (v: unknown) => (typeof v === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(v) ? v : 'other');
  /** Takes one core update into the matching metric; others are left out. */
  const record = (u: CoreMetricUpdate): void => {
    switch (u.name.replace(/^temporal_/, '')) {
      case 'workflow_task_schedule_to_start_latency':
        return m.workflowTaskScheduleToStart.observe(u.value);
      case 'workflow_task_execution_latency':
        return m.workflowTaskExecution.observe({ workflow_type: label(u.attributes.workflow_type) }, u.value);
      case 'workflow_task_execution_failed':
        return m.workflowTaskFailures.inc(u.value);
      case 'activity_schedule_to_start_latency':
        return m.activityScheduleToStart.observe(u.value);
      case 'activity_execution_latency':
        return m.activityExecution.observe({ activity_type: label(u.attributes.activity_type) }, u.value);
      case 'worker_task_slots_available':
        return m.taskSlotsAvailable.set({ worker_type: label(u.attributes.worker_type) }, u.value);
    }
  };
  return { ...m, record };
}
export type TemporalMetrics = ReturnType<typeof temporalMetrics>;
