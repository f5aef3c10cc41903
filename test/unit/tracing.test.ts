import assert from 'node:assert/strict';
import { trace } from '@opentelemetry/api';
import { activeTraceparent, contextOfHeaders, inTraceOf, linksTo, tracingOn, whenTraced } from '../../src/observability/tracing.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('tracing helpers (src/observability/tracing.ts)', () => {
  it('off by default: no span, no traceparent, the work runs as it is', async () => {
    assert.equal(tracingOn(), false);
    assert.equal(activeTraceparent(), undefined);
    assert.equal(await whenTraced('x', {}, async (span) => span), undefined);
    assert.equal(await inTraceOf(`00-${TRACE}-${SPAN}-01`, 'x', {}, async () => trace.getActiveSpan()), undefined);
  });

  it('reads a W3C traceparent as a remote parent, and ignores a malformed or absent one', () => {
    const parent = trace.getSpanContext(contextOfHeaders({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'vendor=1' }));
    assert.deepEqual({ ...parent, traceState: parent?.traceState?.serialize() }, { traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true, traceState: 'vendor=1' });
    assert.equal(trace.getSpanContext(contextOfHeaders({ traceparent: `00-${'0'.repeat(32)}-${SPAN}-01` })), undefined);
    assert.equal(trace.getSpanContext(contextOfHeaders({ traceparent: 'not a traceparent' })), undefined);
    assert.equal(trace.getSpanContext(contextOfHeaders({})), undefined);
  });

  it('links to the queue entries that carry a valid traceparent (old entries have none)', () => {
    const other = 'a'.repeat(32);
    const links = linksTo([`00-${TRACE}-${SPAN}-01`, undefined, 'garbage', `00-${other}-${SPAN}-00`]);
    assert.deepEqual(links.map((l) => [l.context.traceId, l.context.spanId, l.context.traceFlags]), [[TRACE, SPAN, 1], [other, SPAN, 0]]);
  });
});
