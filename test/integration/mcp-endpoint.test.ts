import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exportJWK, generateKeyPair } from 'jose';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { mcpUrl, oauthIssuer, publicOrigin } from '../../src/config/env.js';
import { SCOPES, TOOL_SCOPES } from '@credit-facilitator/wire/onboarding';
import { findOrCreateBorrowerByWallet } from '../../src/store/borrowers.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { newMerchant, world, type World } from '../helpers/world.js';

const ACCEPT = 'application/json, text/event-stream';

interface RawResponse {
  status: number;
  headers: Headers;
  json: any;
}

async function postMcp(url: string, body: unknown, opts: { token?: string; contentType?: string; raw?: string } = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { accept: ACCEPT, 'content-type': opts.contentType ?? 'application/json' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(url, { method: 'POST', headers, body: opts.raw ?? JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
}

const toolCall = (name: string, args: Record<string, unknown>, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

async function sdkClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-endpoint-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

async function signedInBorrower(w: World): Promise<{ borrowerId: string; wallet: string }> {
  const wallet = privateKeyToAddress(generatePrivateKey());
  const b = await findOrCreateBorrowerByWallet(w.store.c, wallet, randomUUID(), new Date());
  return { borrowerId: b._id, wallet: wallet.toLowerCase() };
}

function textOf(result: unknown): string {
  const content = ((result as { content?: unknown }).content ?? []) as { type: string; text?: string }[];
  return content.map((c) => c.text ?? '').join('\n');
}

describe('mcp: endpoint, bearer auth and protected-resource metadata', function () {
  let w: World;
  let url: string;
  let prmUrl: string;

  before(async function () {
    w = await world();
    url = mcpUrl(w.cli.env);
    prmUrl = `${publicOrigin(w.cli.env)}/.well-known/oauth-protected-resource/mcp`;
  });

  it('serves RFC 9728 metadata at the path-suffixed and the root well-known URL', async function () {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const res = await fetch(`${publicOrigin(w.cli.env)}${path}`);
      assert.equal(res.status, 200, path);
      const doc = (await res.json()) as Record<string, unknown>;
      assert.equal(doc.resource, url);
      assert.deepEqual(doc.authorization_servers, [oauthIssuer(w.cli.env)]);
      assert.deepEqual(doc.scopes_supported, [...SCOPES]);
      assert.deepEqual(doc.bearer_methods_supported, ['header']);
      assert.equal(typeof doc.resource_name, 'string');
    }
  });

  it('is what the stock SDK client discovers, and leads it to the authorization server', async function () {
    const prm = await discoverOAuthProtectedResourceMetadata(url);
    assert.equal(prm.resource, url);
    const issuer = prm.authorization_servers?.[0];
    assert.equal(issuer, oauthIssuer(w.cli.env));
    const as = await discoverAuthorizationServerMetadata(issuer as string);
    assert.equal(as?.issuer, issuer);
  });

  it('answers 401 with a resource_metadata challenge for every unacceptable credential', async function () {
    const { borrowerId } = await signedInBorrower(w);
    const merchant = await newMerchant(w);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const stored = await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'] });
    const kid = JSON.parse(Buffer.from(stored.split('.')[0] as string, 'base64url').toString()).kid as string;
    const foreignJwk = { ...(await exportJWK(privateKey)), kid };
    const cases: [string, string | undefined][] = [
      ['no token', undefined],
      ['garbage', 'garbage'],
      ['merchant API key', merchant.apiKey],
      ['expired', await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'], expiresIn: -120 })],
      ['another audience', await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'], audience: 'http://127.0.0.1:1/mcp' })],
      ['wrong issuer', await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'], issuer: 'http://evil.example/oauth' })],
      ['another key, same kid', await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'], signingJwk: foreignJwk })],
      ['not an access token (typ)', await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'], typ: 'JWT' })],
      ['sub is not a borrower id', await mintBorrowerToken(w, { borrowerId: 'alice', scopes: ['borrower:token'] })],
    ];
    for (const [name, token] of cases) {
      const res = await postMcp(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, token ? { token } : {});
      assert.equal(res.status, 401, name);
      const challenge = res.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /^Bearer /, name);
      assert.ok(challenge.includes(`resource_metadata="${prmUrl}"`), `${name}: ${challenge}`);
      if (token) assert.ok(challenge.includes('error="invalid_token"'), `${name}: ${challenge}`);
      else assert.ok(!challenge.includes('error='), `${name}: no error code without a token`);
      assert.equal(res.json.jsonrpc, '2.0', name);
      assert.equal(res.json.error.data.code, 'UNAUTHENTICATED', name);
      assert.match(res.json.error.data.requestId, /^req_/, name);
    }
    const ok = await postMcp(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { token: stored });
    assert.equal(ok.status, 200, 'the stored key and our claims are accepted');
  });

  it('lists the eight tools with input schemas through the stock SDK client', async function () {
    const { borrowerId } = await signedInBorrower(w);
    const client = await sdkClient(url, await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'] }));
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), Object.keys(TOOL_SCOPES).sort());
      for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object', t.name);
        assert.ok(t.description && t.description.length > 40, t.name);
        assert.ok(t.outputSchema, `${t.name} declares an output schema`);
      }
      const byName = new Map(tools.map((t) => [t.name, t]));
      assert.equal(byName.get('get_borrower_status')?.annotations?.readOnlyHint, true);
      assert.equal(byName.get('register_borrower')?.annotations?.idempotentHint, true);
      const keyProps = byName.get('register_agent_key')?.inputSchema.properties ?? {};
      for (const f of ['idempotency_key', 'operational_agent_id', 'public_key', 'per_payment_limit', 'daily_limit', 'expires_at', 'wait_seconds']) {
        assert.ok(f in keyProps, `register_agent_key has ${f}`);
      }
      assert.deepEqual([...(byName.get('register_agent_key')?.inputSchema.required ?? [])].sort(), ['daily_limit', 'expires_at', 'idempotency_key', 'per_payment_limit', 'public_key']);
      assert.ok('payment_required' in (byName.get('prepare_x402_payment')?.inputSchema.properties ?? {}));
    } finally {
      await client.close();
    }
  });

  it('refuses a tool without its scope with 403 insufficient_scope naming the scope with those already granted', async function () {
    const { borrowerId } = await signedInBorrower(w);
    // The borrower consented to more than this token carries (its stage cuts tokens down).
    const consentedScopes = ['borrower:token', 'credit:facility:accept', 'agent:key:register', 'repayment:execute'];
    const token = await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token', 'spend:intent:create'], consentedScopes });

    const res = await postMcp(url, toolCall('accept_credit_facility', { idempotency_key: randomUUID() }, 7), { token });
    assert.equal(res.status, 403);
    const challenge = res.headers.get('www-authenticate') ?? '';
    // MCP 2025-11-25: the scope to request is the needed one with every scope already granted, the
    // token's and the grant's, so re-authorising with exactly it loses nothing.
    const askFor = 'borrower:token credit:facility:accept agent:key:register spend:intent:create repayment:execute';
    assert.match(challenge, new RegExp(`^Bearer error="insufficient_scope", scope="${askFor}", resource_metadata="[^"]+"`));
    assert.ok(challenge.includes(`resource_metadata="${prmUrl}"`));
    assert.equal(res.json.id, 7);
    assert.equal(res.json.error.data.code, 'INSUFFICIENT_SCOPE');
    assert.equal(res.json.error.data.scope, 'credit:facility:accept', 'data.scope: what the tool needs');
    assert.deepEqual(res.json.error.data.missing_scopes, ['credit:facility:accept']);
    // Exactly what the stock client reads before re-authorising with the wider scope.
    const parsed = extractWWWAuthenticateParams(new Response(null, { status: 403, headers: { 'WWW-Authenticate': challenge } }));
    assert.equal(parsed.error, 'insufficient_scope');
    assert.equal(parsed.scope, askFor);
    assert.equal(parsed.resourceMetadataUrl?.href, prmUrl);

    const prepare = await postMcp(url, toolCall('prepare_x402_payment', { payment_required: 'eyJ9' }), { token });
    assert.equal(prepare.status, 403);
    assert.ok(
      (prepare.headers.get('www-authenticate') ?? '').includes('scope="borrower:token credit:facility:accept agent:key:register spend:intent:create policy:evaluate signing:request repayment:execute"'),
      prepare.headers.get('www-authenticate') ?? '',
    );
    assert.deepEqual(prepare.json.error.data.missing_scopes, ['policy:evaluate', 'signing:request']);

    // A grant holding nothing more than the token: the challenge is the token's scopes and the needed ones.
    const narrow = await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'] });
    const claim = await postMcp(url, toolCall('claim_handle', { idempotency_key: randomUUID(), handle: 'alice' }), { token: narrow });
    assert.equal(claim.status, 403);
    assert.ok((claim.headers.get('www-authenticate') ?? '').includes('scope="borrower:token handle:claim"'), claim.headers.get('www-authenticate') ?? '');

    // A batch is refused when any call in it lacks a scope.
    const batch = await postMcp(url, [toolCall('get_borrower_status', {}, 1), toolCall('execute_repayment', { idempotency_key: randomUUID(), amount: '1' }, 2)], { token });
    assert.equal(batch.status, 403);
    assert.equal(batch.json.error.data.scope, 'repayment:execute');

    const client = await sdkClient(url, token);
    try {
      await assert.rejects(client.callTool({ name: 'claim_handle', arguments: { idempotency_key: randomUUID(), handle: 'alice' } }), (err: Error) => {
        assert.match(err.message, /403|insufficient_scope/);
        return true;
      });
    } finally {
      await client.close();
    }
  });

  it('answers invalid arguments with a tool error naming the field, never a 5xx', async function () {
    const { borrowerId } = await signedInBorrower(w);
    const token = await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token', 'handle:claim'] });
    const raw = await postMcp(url, toolCall('register_borrower', { idempotency_key: 'not-a-uuid' }), { token });
    assert.equal(raw.status, 200);
    assert.equal(raw.json.result.isError, true);
    assert.match(raw.json.result.content[0].text, /idempotency_key/);

    const client = await sdkClient(url, token);
    try {
      const bad = await client.callTool({ name: 'claim_handle', arguments: { idempotency_key: randomUUID(), handle: '9lives' } });
      assert.equal(bad.isError, true);
      assert.match(textOf(bad), /handle/);
      const missing = await client.callTool({ name: 'register_borrower', arguments: {} });
      assert.equal(missing.isError, true);
      assert.match(textOf(missing), /idempotency_key/);
    } finally {
      await client.close();
    }
  });

  it('speaks only JSON over POST, within 64 KiB', async function () {
    const { borrowerId } = await signedInBorrower(w);
    const token = await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'] });
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST');
      await res.body?.cancel();
    }
    const textPlain = await postMcp(url, null, { token, contentType: 'text/plain', raw: '{}' });
    assert.equal(textPlain.status, 415);
    const big = await postMcp(url, null, { token, raw: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(70_000) } }) });
    assert.equal(big.status, 413);
    const broken = await postMcp(url, null, { token, raw: '{"jsonrpc":' });
    assert.equal(broken.status, 400);
    assert.equal(broken.json.error.code, -32700);
  });
});

describe('mcp: borrower tools over the endpoint', function () {
  let w: World;
  let url: string;

  before(async function () {
    w = await world();
    url = mcpUrl(w.cli.env);
  });

  it('get_borrower_status reports a signed-in borrower', async function () {
    const { borrowerId, wallet } = await signedInBorrower(w);
    const client = await sdkClient(url, await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'] }));
    try {
      const res = await client.callTool({ name: 'get_borrower_status', arguments: {} });
      assert.notEqual(res.isError, true, textOf(res));
      const s = res.structuredContent as Record<string, unknown>;
      assert.equal(s.borrower_id, borrowerId);
      assert.equal(s.stage, 'SIGNED_IN');
      assert.equal(s.wallet_address, wallet);
      assert.deepEqual(s.token_scopes, ['borrower:token']);
    } finally {
      await client.close();
    }
  });

  it('register_borrower replays the same ids for the same idempotency_key', async function () {
    const { borrowerId } = await signedInBorrower(w);
    const client = await sdkClient(url, await mintBorrowerToken(w, { borrowerId, scopes: ['borrower:token'] }));
    try {
      const key = randomUUID();
      const first = await client.callTool({ name: 'register_borrower', arguments: { idempotency_key: key, terminal_label: 'test host' } });
      assert.notEqual(first.isError, true, textOf(first));
      const a = first.structuredContent as Record<string, unknown>;
      assert.equal(a.borrower_id, borrowerId);
      assert.equal(a.stage, 'WALLET_VERIFIED');
      assert.match(String(a.operational_agent_id), /^[0-9a-f-]{36}$/);
      const again = await client.callTool({ name: 'register_borrower', arguments: { idempotency_key: key, terminal_label: 'test host' } });
      const b = again.structuredContent as Record<string, unknown>;
      assert.equal(b.borrower_id, a.borrower_id);
      assert.equal(b.operational_agent_id, a.operational_agent_id);

      const conflict = await client.callTool({ name: 'register_borrower', arguments: { idempotency_key: key, terminal_label: 'another host' } });
      assert.equal(conflict.isError, true);
      assert.equal(conflict.structuredContent, undefined);
      assert.equal(JSON.parse(textOf(conflict)).error.code, 'IDEMPOTENCY_KEY_CONFLICT');
    } finally {
      await client.close();
    }
  });
});
