import { MetricsBuffer, Runtime } from '@temporalio/worker';
import type { TemporalMetrics } from '../src/observability/temporal-metrics.js';

/**
 * Installs Temporal's core runtime with its metrics buffered (before any connection), and moves
 * the task latencies it records into the worker's registry once a second, so they are served on
 * the worker's own /metrics rather than on a second port.
 */
export function installTemporalRuntime(metrics: Pick<TemporalMetrics, 'record'>, everyMs = 1_000): { stop(): void } {
  const buffer = new MetricsBuffer({ maxBufferSize: 100_000, useSecondsForDurations: true });
  Runtime.install({ telemetryOptions: { metrics: { buffer } } });
  const drain = () => {
    for (const u of buffer.retrieveUpdates()) metrics.record({ name: u.metric.name, value: u.value, attributes: u.attributes });
  };
  const timer = setInterval(drain, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      drain();
    },
  };
}
