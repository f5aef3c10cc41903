import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { markTracingOn } from './tracing.js';

export interface TracingSettings {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' | 'http/json';
  OTEL_SERVICE_NAME?: string | undefined;
}

/** A registered OpenTelemetry SDK: its processor and resource also take the workflows' spans (the worker's sink). */
export interface Tracing {
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Sends the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Registers an OpenTelemetry SDK exporting over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set;
 * otherwise does nothing (the SDK is not even loaded) and returns undefined.
 */
export async function startTracing(settings: TracingSettings, defaultServiceName: string): Promise<Tracing | undefined> {
  const endpoint = settings.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return undefined;
  const [{ W3CTraceContextPropagator }, { AsyncLocalStorageContextManager }, { BasicTracerProvider, BatchSpanProcessor }, { Resource }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    settings.OTEL_EXPORTER_OTLP_PROTOCOL === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
  const resource = Resource.default().merge(new Resource({ 'service.name': settings.OTEL_SERVICE_NAME ?? defaultServiceName }));
  const spanProcessor = new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register({ contextManager: new AsyncLocalStorageContextManager(), propagator: new W3CTraceContextPropagator() });
  markTracingOn();
  return { spanProcessor, resource, shutdown: () => provider.shutdown() };
}
