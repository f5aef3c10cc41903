import type { ClientInterceptors } from '@temporalio/client';
import { tracingOn } from '../observability/tracing.js';

/**
 * Interceptors that carry the active trace into the workflows a client starts or signals (Temporal's
 * OpenTelemetry interceptors, through the workflow's headers); none, and nothing loaded, while tracing is off.
 */
export async function tracingClientInterceptors(): Promise<ClientInterceptors | undefined> {
  if (!tracingOn()) return undefined;
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}
