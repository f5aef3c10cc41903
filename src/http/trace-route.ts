import { context, SpanKind, trace } from '@opentelemetry/api';
import type { Context, Next } from 'koa';
import { ApiError } from '../domain/errors.js';
import { contextOfHeaders, failSpan, tracer } from '../observability/tracing.js';

/**
 * A server span for one route, continuing the caller's trace when it sends a W3C `traceparent`.
 * Mounted only while tracing is on (routes check tracingOn()), so an untraced API does no work here.
 */
export function traceRoute(route: string) {
  return async (ctx: Context, next: Next) => {
    const parent = contextOfHeaders({ traceparent: ctx.get('traceparent') || undefined, tracestate: ctx.get('tracestate') || undefined });
    const span = tracer.startSpan(
      `${ctx.method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'http.route': route } },
      parent,
    );
    let status = 0;
    try {
      await context.with(trace.setSpan(parent, span), next);
      status = ctx.status;
    } catch (err) {
      status = err instanceof ApiError ? err.status : 500;
      // A refusal is the client's answer, not this server's fault: only 5xx marks the span failed.
      if (status >= 500) failSpan(span, err);
      throw err;
    } finally {
      span.setAttribute('http.response.status_code', status);
      const paymentId = ctx.state.workflowId as string | undefined;
      if (paymentId) span.setAttribute('x402.payment.id', paymentId);
      span.end();
    }
  };
}
