import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { mcpUrl, publicOrigin } from '../../src/config/env.js';
import { findOrCreateBorrowerByWallet } from '../../src/store/borrowers.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { world, type World } from '../helpers/world.js';

const REVISION = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw 2026 client', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Raw {
  status: number;
  headers: Headers;
  json: any;
}

/** One stateless 2026-07-28 request as the spec writes it: `_meta` envelope, MCP-Protocol-Version, Mcp-Method and (for tools/call) Mcp-Name. */
async function post2026(url: string, message: { id?: string | number; method: string; params?: Record<string, unknown> }, o: { token?: string; headers?: Record<string, string>; meta?: Record<string, unknown> } = {}): Promise<Raw> {
  const name: Record<string, string> = typeof message.params?.name === 'string' ? { 'mcp-name': message.params.name } : {};
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': REVISION, 'mcp-method': message.method, ...name,
    ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...o.headers,
  };
  const body = { jsonrpc: '2.0', ...message, params: { ...message.params, _meta: o.meta ?? META } };
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
}

/** The /mcp error shape every refusal carries. */
function assertMcpError(r: Raw, status: number, rpcCode: number, dataCode: string, id: unknown): void {
  assert.equal(r.status, status, JSON.stringify(r.json));
  assert.equal(r.json.jsonrpc, '2.0');
  assert.equal(r.json.id, id);
  assert.equal(r.json.error.code, rpcCode);
  assert.equal(r.json.error.data.code, dataCode);
  assert.match(r.json.error.data.requestId, /^req_/);
  assert.doesNotMatch(JSON.stringify(r.json), /at .*\.(js|ts):\d+/, 'no stack trace');
}

describe('mcp 2026-07-28 natively: server/discover, stateless calls, header checks, 404, authorization', function () {
  let w: World;
  let url: string;
  let borrowerId: string;
  let token: string;

  before(async function () {
    w = await world();
    url = mcpUrl(w.cli.env);
    const wallet = privateKeyToAddress(generatePrivateKey());
    borrowerId = (await findOrCreateBorrowerByWallet(w.store.c, wallet, randomUUID(), new Date()))._id;
    token = await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'], consentedScopes: ['borrower:token', 'credit:facility:accept'] });
  });

  it('server/discover at 2026-07-28 is 200 with the supported versions, capabilities and identity; no session id', async function () {
    const r = await post2026(url, { id: 'd-1', method: 'server/discover' }, { token });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.id, 'd-1');
    assert.deepEqual(r.json.result.supportedVersions, [REVISION]);
    assert.deepEqual(r.json.result.capabilities, { tools: { listChanged: false } });
    assert.equal(r.json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'credit-facilitator');
    assert.match(r.json.result.instructions, /register_borrower/);
    assert.equal(r.headers.get('mcp-session-id'), null);
  });

  it('serves tools/list and tools/call statelessly (no initialize, no session), with the same tools as 2025-11-25', async function () {
    const list = await post2026(url, { id: 1, method: 'tools/list' }, { token });
    assert.equal(list.status, 200, JSON.stringify(list.json));
    const names = (list.json.result.tools as { name: string }[]).map((t) => t.name);
    const legacy = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.deepEqual(names, ((await legacy.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name));

    const status = await post2026(url, { id: 2, method: 'tools/call', params: { name: 'get_borrower_status', arguments: {} } }, { token });
    assert.equal(status.status, 200, JSON.stringify(status.json));
    assert.equal(status.json.result.isError, undefined, JSON.stringify(status.json));
    assert.equal(status.json.result.structuredContent.borrower_id, borrowerId);
    assert.equal(status.headers.get('mcp-session-id'), null, 'no session is issued');
    // A session id from elsewhere means nothing on this revision: the call is served the same.
    const withSession = await post2026(url, { id: 3, method: 'tools/call', params: { name: 'get_borrower_status', arguments: {} } }, { token, headers: { 'mcp-session-id': 'never-issued' } });
    assert.equal(withSession.status, 200);
    assert.equal(withSession.json.result.structuredContent.borrower_id, borrowerId);
  });

  it('a notification is 202 with no body', async function () {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': REVISION, 'mcp-method': 'notifications/cancelled' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: META } }),
    });
    assert.equal(res.status, 202);
    assert.equal(await res.text(), '');
  });

  it('Mcp-Method or Mcp-Name disagreeing with the body, or missing, is 400 -32020', async function () {
    const mismatch = await post2026(url, { id: 4, method: 'tools/list' }, { token, headers: { 'mcp-method': 'tools/call' } });
    assertMcpError(mismatch, 400, -32020, 'INVALID_REQUEST', 4);
    assert.deepEqual(Object.keys(mismatch.json.error.data.mismatch).sort(), ['body', 'header']);
    const name = await post2026(url, { id: 5, method: 'tools/call', params: { name: 'get_borrower_status', arguments: {} } }, { token, headers: { 'mcp-name': 'register_borrower' } });
    assertMcpError(name, 400, -32020, 'INVALID_REQUEST', 5);
    const noMethod = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': REVISION },
      body: JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: META } }),
    });
    assertMcpError({ status: noMethod.status, headers: noMethod.headers, json: await noMethod.json() }, 400, -32020, 'INVALID_REQUEST', 6);
    // The version header must agree with the envelope too.
    const version = await post2026(url, { id: 7, method: 'tools/list' }, { token, headers: { 'mcp-protocol-version': '2025-11-25' } });
    assertMcpError(version, 400, -32020, 'INVALID_REQUEST', 7);
  });

  it('an unknown method is HTTP 404 with -32601, and so is subscriptions/listen (nothing to push)', async function () {
    for (const method of ['no/such_method', 'initialize', 'subscriptions/listen']) {
      const r = await post2026(url, { id: `m-${method}`, method }, { token });
      assertMcpError(r, 404, -32601, 'METHOD_NOT_FOUND', `m-${method}`);
    }
  });

  it('an envelope naming a revision we do not speak is 400 -32022 with the supported list; one without its version key is -32602', async function () {
    const future = await post2026(url, { id: 8, method: 'tools/list' }, { token, meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' }, headers: { 'mcp-protocol-version': '2030-01-01' } });
    assertMcpError(future, 400, -32022, 'INVALID_REQUEST', 8);
    assert.deepEqual(future.json.error.data.supported, [REVISION]);
    assert.equal(future.json.error.data.requested, '2030-01-01');
    const noVersion = await post2026(url, { id: 9, method: 'tools/list' }, { token, meta: { 'io.modelcontextprotocol/clientInfo': META['io.modelcontextprotocol/clientInfo'] } });
    assert.equal(noVersion.status, 400);
    assert.equal(noVersion.json.error.code, -32602);
    // The 2025-era path's -32022 now names 2026-07-28 beside the initialize revisions.
    const legacy = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2024-01-01' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' }),
    });
    const supported = ((await legacy.json()) as { error: { data: { supported: string[] } } }).error.data.supported;
    assert.ok(supported.includes(REVISION) && supported.includes('2025-11-25'), supported.join());
  });

  it('authorization as for every revision: 401 without a valid token for this resource, 403 insufficient_scope per tool', async function () {
    const prm = `${publicOrigin(w.cli.env)}/.well-known/oauth-protected-resource/mcp`;
    for (const method of ['server/discover', 'tools/list']) {
      const none = await post2026(url, { id: 11, method });
      assert.equal(none.status, 401, method);
      assert.equal(none.headers.get('www-authenticate'), `Bearer resource_metadata="${prm}"`);
    }
    const otherAudience = await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'], audience: 'https://other.example/mcp' });
    const wrong = await post2026(url, { id: 12, method: 'tools/list' }, { token: otherAudience });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get('www-authenticate') ?? '', /error="invalid_token"/);

    const refused = await post2026(url, { id: 13, method: 'tools/call', params: { name: 'accept_credit_facility', arguments: { idempotency_key: randomUUID() } } }, { token });
    assertMcpError(refused, 403, -32000, 'INSUFFICIENT_SCOPE', 13);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer error="insufficient_scope", scope="borrower:token credit:facility:accept", resource_metadata="/);
  });
});
