import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../src/observability/tracing-setup.js';
import { workflowCode } from './workflow-code.js';

/**
 * What a worker adds to trace its workflows and activities (Temporal's OpenTelemetry interceptors):
 * the traced workflow bundle, activity interceptors, and the sink that hands the workflows' spans
 * (made inside the workflow sandbox) to this process's exporter. Without tracing: the plain bundle.
 */
export function tracedWorkerOptions(tracing: Tracing | undefined): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions' | 'interceptors' | 'sinks'> {
  if (!tracing) return workflowCode(false);
  const code = workflowCode(true);
  return {
    ...code,
    interceptors: {
      ...('interceptors' in code ? code.interceptors : {}),
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

/** The worker's own client (activities signal and start workflows with it) carries the active trace too. */
export function tracedClientInterceptors(tracing: Tracing | undefined): ClientInterceptors | undefined {
  return tracing ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}
