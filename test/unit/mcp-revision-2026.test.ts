import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpHandler } from '@modelcontextprotocol/server';
import type { AppDeps } from '../../src/main/app-deps.js';
import { CallRecord } from '../../src/mcp/call-record.js';
import { modernRefusal } from '../../src/mcp/revision-2026/refusals.js';
import { createModernMcpServer } from '../../src/mcp/revision-2026/server.js';
import { isModernRevisionRequest } from '../../src/mcp/revision-2026/serve.js';
import { createMcpServer } from '../../src/mcp/server.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'unit', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function request(method: string, headers: Record<string, string> = {}): Request {
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...headers },
  });
}

/** One 2026-07-28 message through the stock v2 handler over our server; no tool reaches its deps here. */
async function modern(body: { id?: number; method: string; params?: Record<string, unknown> }, headers: Record<string, string> = {}) {
  const record = new CallRecord();
  const handler = createMcpHandler(() => createModernMcpServer({ deps: {} as AppDeps, record, requestId: 'unit' }), { legacy: 'reject' });
  try {
    const res = await handler.fetch(request(body.method, headers), { parsedBody: { jsonrpc: '2.0', ...body, params: { ...body.params, _meta: META } } });
    return { status: res.status, json: (await res.json()) as { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } }, record };
  } finally {
    await handler.close();
  }
}

describe('mcp 2026-07-28: the v2 server over the shared tool registry', function () {
  it('server/discover lists 2026-07-28 and the tools capability, without listChanged', async function () {
    const { status, json } = await modern({ id: 1, method: 'server/discover' });
    assert.equal(status, 200);
    assert.deepEqual(json.result?.supportedVersions, ['2026-07-28']);
    assert.deepEqual(json.result?.capabilities, { tools: { listChanged: false } });
  });

  it('lists the same eight tools, with the same schemas, as the 2025-era server', async function () {
    const v1 = createMcpServer({ deps: {} as AppDeps, record: new CallRecord(), requestId: 'unit' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'unit', version: '0' });
    await Promise.all([v1.connect(serverSide), client.connect(clientSide)]);
    const legacy = (await client.listTools()).tools;
    await client.close();
    const { json } = await modern({ id: 2, method: 'tools/list' });
    const tools = json.result?.tools as { name: string; inputSchema: unknown; outputSchema?: unknown; annotations?: unknown }[];
    assert.deepEqual(tools.map((t) => t.name), legacy.map((t) => t.name));
    for (const t of tools) {
      const l = legacy.find((x) => x.name === t.name)!;
      assert.deepEqual(t.annotations, l.annotations, t.name);
      assert.deepEqual(Object.keys((t.inputSchema as { properties: object }).properties).sort(), Object.keys(l.inputSchema.properties ?? {}).sort(), t.name);
    }
  });

  it('a tool call runs the shared handler: without a borrower token it is UNAUTHENTICATED, recorded for the call log', async function () {
    const { status, json, record } = await modern({ id: 3, method: 'tools/call', params: { name: 'get_borrower_status', arguments: {} } }, { 'mcp-name': 'get_borrower_status' });
    assert.equal(status, 200);
    assert.equal(json.result?.isError, true);
    assert.match(JSON.stringify(json.result?.content), /UNAUTHENTICATED/);
    assert.equal(record.get(3)?.errorCode, 'UNAUTHENTICATED');
  });

  it('answers "not found" for names an object inherits', async function () {
    for (const name of ['valueOf', 'constructor', 'toString']) {
      const { json } = await modern({ id: 4, method: 'tools/call', params: { name, arguments: {} } }, { 'mcp-name': name });
      assert.match(JSON.stringify(json), new RegExp(`Tool ${name} not found`), name);
    }
  });

  it('header/body mismatch is 400 -32020; an unknown method is 404 -32601', async function () {
    const mismatch = await modern({ id: 5, method: 'tools/list' }, { 'mcp-method': 'tools/call' });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.json.error?.code, -32020);
    const unknown = await modern({ id: 6, method: 'no/such_method' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error?.code, -32601);
  });

  it('routes by the body: a `_meta` claim is modern, initialize and envelope-less requests are not', async function () {
    assert.equal(await isModernRevisionRequest(request('tools/list'), { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } }), true);
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'u', version: '0' } } };
    assert.equal(await isModernRevisionRequest(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'content-type': 'application/json' } }), init), false);
    const plain = new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' } });
    assert.equal(await isModernRevisionRequest(plain, { jsonrpc: '2.0', id: 1, method: 'tools/list' }), false);
  });
});

describe('mcp 2026-07-28: refusals in the /mcp error shape', function () {
  it('keeps the id, the JSON-RPC code and the data a client acts on; adds code and requestId', function () {
    const e = modernRefusal(400, { jsonrpc: '2.0', id: 9, error: { code: -32022, message: 'Unsupported protocol version: 2030-01-01\nmore', data: { supported: ['2026-07-28'], requested: '2030-01-01', stack: 'x' } } }, 'req_1');
    assert.equal(e.status, 400);
    assert.deepEqual(e.body, {
      jsonrpc: '2.0', id: 9,
      error: { code: -32022, message: 'Unsupported protocol version: 2030-01-01', data: { supported: ['2026-07-28'], requested: '2030-01-01', code: 'INVALID_REQUEST', requestId: 'req_1' } },
    });
    const nf = modernRefusal(404, { jsonrpc: '2.0', id: 'a', error: { code: -32601, message: 'Method not found' } }, 'req_2');
    assert.equal(nf.body.error.data.code, 'METHOD_NOT_FOUND');
    assert.equal(nf.body.id, 'a');
  });

  it('a 5xx or an unreadable answer is our plain 500, without the SDK text', function () {
    for (const [status, body] of [[500, { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'boom at /src/x.ts:1' } }], [400, 'garbage'], [418, { error: { code: 1, message: 'x' } }]] as const) {
      const e = modernRefusal(status, body, 'req_3');
      assert.equal(e.status, 500);
      assert.equal(e.body.error.data.code, 'INTERNAL');
      assert.doesNotMatch(e.body.error.message, /boom/);
    }
  });
});
