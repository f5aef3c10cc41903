import { context, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Link, type Span, type SpanOptions } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/**
 * The spans the product makes itself, through OpenTelemetry's API. Until tracing-setup.ts registers
 * an SDK (OTEL_EXPORTER_OTLP_ENDPOINT set) the API's tracer is a no-op, and the helpers that would
 * do work for nothing (reading or parsing a traceparent) return at once.
 */
let on = false;

export function tracingOn(): boolean {
  return on;
}

/** Called once an SDK is registered (tracing-setup.ts). */
export function markTracingOn(): void {
  on = true;
}

export const tracer = trace.getTracer('credit-facilitator');
/** traceparent and tracestate, read and written by this module whatever propagator is registered globally. */
const w3c = new W3CTraceContextPropagator();

/** Runs `fn` in a new span, a child of the active one (or of `parent`); a throw marks the span failed. */
export function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>, parent: Context = context.active()): Promise<T> {
  return tracer.startActiveSpan(name, options, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** withSpan while tracing is on; otherwise runs `fn` with no span, so an untraced process does no span work at all. */
export function whenTraced<T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  return on ? withSpan(name, options, fn) : fn(undefined);
}

/**
 * Runs `fn` in a span of the trace `traceparent` names, linked to the span active here: work done
 * for one payment inside a batch (its outcome signal) shows in the payment's own trace.
 * Without tracing or a traceparent, runs `fn` as it is.
 */
export function inTraceOf<T>(traceparent: string | undefined, name: string, options: SpanOptions, fn: () => Promise<T>): Promise<T> {
  if (!on || !traceparent) return fn();
  const here = trace.getActiveSpan()?.spanContext();
  return withSpan(name, { ...options, links: [...(options.links ?? []), ...(here ? [{ context: here }] : [])] }, fn, contextOfHeaders({ traceparent }));
}

export function failSpan(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** The W3C traceparent of the active span, to store beside work another process picks up later. */
export function activeTraceparent(): string | undefined {
  if (!on) return undefined;
  const carrier: Record<string, string> = {};
  w3c.inject(context.active(), carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

/** The context a W3C traceparent (and tracestate) header names as parent; ROOT_CONTEXT when absent or invalid. */
export function contextOfHeaders(headers: { traceparent?: string | undefined; tracestate?: string | undefined }): Context {
  if (!headers.traceparent) return ROOT_CONTEXT;
  const carrier: Record<string, string> = { traceparent: headers.traceparent };
  if (headers.tracestate) carrier.tracestate = headers.tracestate;
  return w3c.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
}

/** Links to the spans these traceparents name (the invalid and absent ones are skipped). */
export function linksTo(traceparents: Iterable<string | undefined>): Link[] {
  const links: Link[] = [];
  for (const traceparent of traceparents) {
    if (!traceparent) continue;
    const spanContext = trace.getSpanContext(contextOfHeaders({ traceparent }));
    if (spanContext) links.push({ context: spanContext });
  }
  return links;
}
