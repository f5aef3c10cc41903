import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { Registry } from 'prom-client';
import type { BorrowerPrincipal } from '../../src/agents/types.js';
import { observeRequests } from '../../src/http/observe-requests.js';
import { CallRecord } from '../../src/mcp/call-record.js';
import { logMcpCalls } from '../../src/mcp/call-log.js';
import { createLogger } from '../../src/observability/logger.js';
import { apiMetrics } from '../../src/observability/metrics.js';

const principal: BorrowerPrincipal = { borrowerId: randomUUID(), clientId: 'c', scopes: new Set(), expiresAt: 0 } as unknown as BorrowerPrincipal;

/** Series of one metric in the registry's text, as their label strings. */
async function series(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l.startsWith(`${name}{`));
}

describe('metric labels stay bounded whatever the caller sends', function () {
  it('x402_mcp_tool_calls_total: an unknown tool name or a foreign error code adds no series of its own', async function () {
    const registry = new Registry();
    const metrics = apiMetrics(registry);
    const logger = createLogger('silent');
    const record = new CallRecord();
    const names = Array.from({ length: 50 }, () => `evil_${randomUUID()}`);
    const request = names.map((name, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name, arguments: {} } }));
    const response = names.map((_n, i) => (i % 2 ? { jsonrpc: '2.0', id: i, error: { code: `weird-${randomUUID()}` } } : { jsonrpc: '2.0', id: i, result: { isError: true } }));
    record.set(1000, { tool: 'claim_handle', outcome: 'tool_error', errorCode: 'HANDLE_TAKEN' });
    request.push({ jsonrpc: '2.0', id: 1000, method: 'tools/call', params: { name: 'claim_handle', arguments: {} } });
    logMcpCalls(logger, { requestId: 'req_1', principal, latencyMs: 1 }, request, response, record, metrics);

    const lines = await series(registry, 'x402_mcp_tool_calls_total');
    for (const l of lines) assert.ok(!/evil_|weird-/.test(l), `caller-chosen value in a label: ${l}`);
    assert.ok(lines.some((l) => l.includes('tool="unknown"')), lines.join('\n'));
    assert.ok(lines.some((l) => l.includes('tool="claim_handle"') && l.includes('outcome="HANDLE_TAKEN"')), lines.join('\n'));
    assert.ok(lines.length <= 4, `bounded series: ${lines.join('\n')}`);
  });

  it('x402_http_requests_total: an unusual HTTP method is OTHER', async function () {
    const registry = new Registry();
    const metrics = apiMetrics(registry);
    const mw = observeRequests(createLogger('silent'), metrics);
    for (const method of ['GET', 'PROPFIND', 'MKCALENDAR', 'X-EVIL']) {
      const ctx = { method, path: '/mcp', status: 404, state: {} } as unknown as Context;
      await mw(ctx, async () => undefined);
    }
    const lines = await series(registry, 'x402_http_requests_total');
    assert.ok(lines.some((l) => l.includes('method="GET"')), lines.join('\n'));
    assert.ok(lines.some((l) => l.includes('method="OTHER"')), lines.join('\n'));
    for (const l of lines) assert.ok(!/PROPFIND|MKCALENDAR|X-EVIL/.test(l), `raw method in a label: ${l}`);
  });
});
