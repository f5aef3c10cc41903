import assert from 'node:assert/strict';
import { auth, Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { newIdempotencyKey } from '../../src/agent-client/credit-agent.js';
import { generateWorkloadKey } from '../../src/agent-client/workload-key.js';
import { payFetch } from '../../src/agent-client/x402-fetch.js';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { mcpUrl, oauthIssuer } from '../../src/config/env.js';
import { uuidToBytes32 } from '../../src/domain/ids.js';
import { encodeKey } from '../../src/domain/voucher.js';
import { createDemoMerchant, type DemoMerchant } from '../../src/demo-merchant/app.js';
import { demoMerchantConfig } from '../../src/demo-merchant/config.js';
import { createLogger } from '../../src/observability/logger.js';
import { completeSignIn, openBrowser, signOnPage, startRedirectCatcher, type BrowserHandle, type RedirectCatcher, type WalletPage } from '../support/browser.js';
import { InMemoryV2OAuthProvider } from '../support/sdk-v2-oauth.js';
import { call, newMerchant, world, type TestMerchant, type World } from '../helpers/world.js';

const PRICE = '2500000';

interface Sent {
  method: string;
  url: string;
  headers: Headers;
  body: string | undefined;
}

/**
 * The same journey as agent-e2e.test.ts, driven by a stock `@modelcontextprotocol/client` 2.x: its
 * own OAuth (RFC 9728/8414 discovery, DCR with the `application_type` it derives, PKCE, the RFC 9207
 * `iss` check on the callback, scope step-up on 403 insufficient_scope) against our authorization
 * server, the borrower signing every step in headless Chromium, and a paid request that settles.
 */
describe('agent end to end with the v2 SDK (@modelcontextprotocol/client): DCR, iss, step-up, a paid request', function () {
  this.timeout(300_000);
  let w: World;
  let browser: BrowserHandle;
  let wp: WalletPage;
  let catcher: RedirectCatcher;
  let provider: InMemoryV2OAuthProvider;
  let merchant: TestMerchant;
  let shop: DemoMerchant;
  let url: URL;
  const borrowerKey = generatePrivateKey();
  const borrowerWallet = privateKeyToAccount(borrowerKey).address;
  const workloadKey = generateWorkloadKey();
  const signIns: Promise<URL>[] = [];
  /** Every authorization URL the SDK opened, and every callback the browser landed on. */
  const authorizations: URL[] = [];
  const callbacks: URL[] = [];
  const sent: Sent[] = [];

  // Every request the SDK makes (discovery, registration, token, /mcp), as it made it.
  const recordingFetch: typeof fetch = async (input, init) => {
    const body = init?.body;
    sent.push({
      method: init?.method ?? 'GET',
      url: String(input instanceof Request ? input.url : input),
      headers: new Headers(init?.headers),
      body: typeof body === 'string' ? body : body instanceof URLSearchParams ? body.toString() : undefined,
    });
    return fetch(input, init);
  };

  before(async () => {
    w = await world();
    url = new URL(mcpUrl(w.cli.env));
    browser = await openBrowser();
    wp = await browser.newWalletPage(borrowerKey);
    catcher = await startRedirectCatcher();
    // The host "opens the browser": headless Chromium on our sign-in page with the borrower's wallet.
    provider = new InMemoryV2OAuthProvider(catcher.redirectUri, (u) => {
      authorizations.push(u);
      signIns.push(completeSignIn(wp.page, u.href, catcher.redirectUri));
    });
    merchant = await newMerchant(w, 'V2 SDK Shop');
    shop = await createDemoMerchant(
      demoMerchantConfig({ apiKey: merchant.apiKey, merchantId: merchant.merchantId, payTo: merchant.payoutAddress, facilitatorUrl: w.baseUrl, price: PRICE, port: 0, pollIntervalMs: 200 }),
      { logger: createLogger('silent') },
    );
  });

  after(async () => {
    await shop?.close();
    await catcher?.close();
    await browser?.close();
  });

  /** The browser came back to the loopback redirect: hand the whole callback query (code, state, iss) to the SDK. */
  async function finishSignIn(transport: StreamableHTTPClientTransport): Promise<URL> {
    const pending = signIns.shift();
    assert.ok(pending, 'the SDK sent the borrower to sign in');
    const landed = await pending;
    callbacks.push(landed);
    assert.equal(landed.searchParams.get('state'), provider.pendingState);
    await transport.finishAuth(landed.searchParams);
    return landed;
  }

  let session: { client: Client; transport: StreamableHTTPClientTransport } | undefined;

  async function connect(opts: ConstructorParameters<typeof Client>[1] = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    for (let attempt = 0; ; attempt++) {
      const transport = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: recordingFetch });
      const client = new Client({ name: 'v2 e2e agent host', version: '1.0.0' }, opts);
      try {
        await client.connect(transport);
        return { client, transport };
      } catch (err) {
        if (!(err instanceof UnauthorizedError) || attempt > 0) throw err;
        await finishSignIn(transport);
      }
    }
  }

  /** tools/call; a step-up the SDK could not finish by refreshing sends the borrower to the browser once more. */
  async function tool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const s = session!;
    let result;
    try {
      result = await s.client.callTool({ name, arguments: args });
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
      await finishSignIn(s.transport);
      result = await s.client.callTool({ name, arguments: args });
    }
    const out = result.structuredContent as Record<string, unknown> | undefined;
    assert.ok(!result.isError, `${name}: ${JSON.stringify(out ?? result.content)}`);
    assert.ok(out, `${name} answered structured content`);
    return out;
  }

  /** A signing tool: the borrower opens the link and signs in their wallet; re-call with the same arguments until done. */
  async function signingStep(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    let step = await tool(name, args);
    if (step.status === 'signature_required') await signOnPage(wp.page, String(step.signing_url));
    for (let i = 0; i < 20 && (step.status === 'signature_required' || step.status === 'processing'); i++) step = await tool(name, { ...args, wait_seconds: 10 });
    assert.equal(step.status, 'completed', JSON.stringify(step));
    return step;
  }

  /** The stock way to pick up scopes a stage just unlocked: auth() with a stored refresh token refreshes, no browser. */
  async function refreshAfterStageAdvance(): Promise<void> {
    assert.equal(await auth(provider, { serverUrl: url, fetchFn: recordingFetch }), 'AUTHORIZED');
  }

  it('onboards with the SDK\'s own OAuth and pays the merchant to CONFIRMED', async () => {
    session = await connect();
    assert.equal(authorizations.length, 1, 'the borrower signed in once');

    // What the v2 SDK sent while authorising, and what our server answered.
    const registration = sent.find((s) => s.method === 'POST' && s.url.endsWith('/oauth/reg'));
    assert.ok(registration?.body, 'the SDK registered itself (DCR)');
    const doc = JSON.parse(registration.body) as Record<string, unknown>;
    assert.equal(doc.application_type, 'native', 'a loopback redirect makes the SDK register a native client');
    assert.deepEqual(doc.redirect_uris, [catcher.redirectUri]);
    const first = authorizations[0]!;
    assert.equal(first.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(first.searchParams.get('resource'), url.href);
    assert.equal(callbacks[0]!.searchParams.get('iss'), oauthIssuer(w.cli.env), 'RFC 9207: the authorization response names its issuer');
    assert.ok(sent.some((s) => s.url.endsWith('/oauth/token') && s.body?.includes('code_verifier=')), 'PKCE verifier sent with the code');

    const reg = await tool('register_borrower', { idempotency_key: newIdempotencyKey(), terminal_label: 'v2 laptop' });
    assert.equal(reg.stage, 'WALLET_VERIFIED');
    assert.equal(String(reg.wallet_address).toLowerCase(), borrowerWallet.toLowerCase());
    const operationalAgentId = reg.operational_agent_id as string;
    const borrowerId = reg.borrower_id as string;

    await refreshAfterStageAdvance();
    await signingStep('accept_credit_facility', { idempotency_key: newIdempotencyKey() });
    await refreshAfterStageAdvance();
    const expiresAt = Math.floor(Date.now() / 1000) + 7 * 24 * 3600;
    await signingStep('register_agent_key', {
      idempotency_key: newIdempotencyKey(), operational_agent_id: operationalAgentId, public_key: encodeKey(workloadKey.publicKey),
      per_payment_limit: '10000000', daily_limit: '50000000', expires_at: expiresAt,
    });
    await refreshAfterStageAdvance();
    const handle = await tool('claim_handle', { idempotency_key: newIdempotencyKey(), handle: `v2_${borrowerId.slice(0, 8)}` });
    assert.equal(handle.stage, 'ACTIVE');
    assert.equal(authorizations.length, 1, 'refreshing after each stage needed no new sign-in');

    // No refresh this time: the transport's own step-up (403 insufficient_scope) runs. The token
    // response's scope lacks what ACTIVE unlocked, so the SDK asks for a new authorization naming
    // the union of the scopes it holds and those challenged; the borrower signs in once more.
    const heldBefore = new Set(String(provider.tokens()?.scope ?? '').split(' '));
    const paid = await payFetch(
      { prepare: (a) => tool('prepare_x402_payment', { ...a }), privateKey: workloadKey.privateKey, orderKeys: new Map(), operationalAgentId },
      `${shop.url}/premium/report`,
    );
    assert.equal(authorizations.length, 2, 'one step-up authorization');
    const stepUp = new Set((authorizations[1]!.searchParams.get('scope') ?? '').split(' '));
    for (const s of ['spend:intent:create', 'policy:evaluate', 'signing:request', ...[...heldBefore].filter(Boolean)]) assert.ok(stepUp.has(s), `step-up asks for ${s}`);

    assert.equal(paid.response.status, 200, await paid.response.clone().text());
    assert.ok(paid.paid && paid.paymentId);
    const poll = await call(w, 'GET', `/facilitator/payments/${paid.paymentId}`, { token: merchant.apiKey });
    assert.equal(poll.json.status, 'CONFIRMED');
    assert.equal(poll.json.payer, borrowerId);
    const debt = (await w.publicClient.readContract({ address: w.settlement, abi: creditSettlementAbi, functionName: 'debtOf', args: [uuidToBytes32(borrowerId)] })) as bigint;
    assert.equal(debt, BigInt(PRICE));

    // After initialize, every /mcp POST named the negotiated version; the server never issued a session id.
    const mcpPosts = sent.filter((s) => s.method === 'POST' && s.url === url.href && !s.body?.includes('"initialize"'));
    assert.ok(mcpPosts.length > 5);
    assert.ok(mcpPosts.every((s) => s.headers.get('mcp-protocol-version') === '2025-11-25'), 'MCP-Protocol-Version 2025-11-25 on every call');
    assert.ok(mcpPosts.every((s) => !s.headers.has('mcp-session-id')), 'stateless: no session id to send');
  });

  it('answers the stateless and the session forms, 2025-06-18 and 2025-11-25, and sends a 2026-07-28 client back to initialize', async () => {
    const token = provider.tokens()?.access_token;
    assert.ok(token);
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
    const list = { jsonrpc: '2.0', id: 7, method: 'tools/list' };

    for (const version of ['2025-06-18', '2025-11-25']) {
      const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      assert.equal(init.status, 200);
      assert.equal(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion, version, `${version} is negotiated as asked`);
      assert.equal(init.headers.get('mcp-session-id'), null, 'no session is opened');
      const plain = await post(list, { 'mcp-protocol-version': version });
      assert.equal(plain.status, 200, `tools/list at ${version} without a session id`);
      // A client holding a session id from elsewhere (the stateful form) is answered the same way.
      const withSession = await post(list, { 'mcp-protocol-version': version, 'mcp-session-id': 'a-session-the-server-never-issued' });
      assert.equal(withSession.status, 200, `tools/list at ${version} with a session id`);
      assert.ok(((await withSession.json()) as { result: { tools: unknown[] } }).result.tools.length >= 8);
    }

    // The 2026-07-28 era probe: -32022 with the versions we speak, to the probe's own id.
    const probe = await post({ jsonrpc: '2.0', id: 'probe-1', method: 'server/discover', params: {} }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' });
    assert.equal(probe.status, 400);
    const refusal = (await probe.json()) as { id: unknown; error: { code: number; data: { supported: string[]; requested: string } } };
    assert.equal(refusal.id, 'probe-1');
    assert.equal(refusal.error.code, -32022);
    assert.equal(refusal.error.data.requested, '2026-07-28');
    assert.ok(refusal.error.data.supported.includes('2025-11-25'));

    // The stock v2 client negotiating its era (versionNegotiation auto) falls back and works.
    const probing = await connect({ versionNegotiation: { mode: 'auto' } });
    try {
      const tools = await probing.client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'prepare_x402_payment'));
      assert.equal(probing.client.getNegotiatedProtocolVersion(), '2025-11-25', 'fell back to the 2025 era');
    } finally {
      await probing.client.close();
    }
    const probes = sent.filter((s) => s.body?.includes('"server/discover"'));
    assert.ok(probes.length >= 1 && probes.every((s) => s.headers.get('mcp-protocol-version') === '2026-07-28'), 'the v2 client probed with 2026-07-28 first');
  });

  it('DCR takes application_type as the spec pairs it: native for loopback, web for named https hosts', async () => {
    const register = async (doc: Record<string, unknown>) => {
      const res = await fetch(`${new URL(oauthIssuer(w.cli.env)).origin}/oauth/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(doc) });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const base = { client_name: 'app type check', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };
    const native = await register({ ...base, application_type: 'native', redirect_uris: ['http://127.0.0.1:49152/callback', 'http://[::1]:49152/callback'] });
    assert.equal(native.status, 201, JSON.stringify(native.json));
    assert.equal(native.json.application_type, 'native');
    const web = await register({ ...base, application_type: 'web', redirect_uris: ['https://agent.example.com/oauth/callback'] });
    assert.equal(web.status, 201, JSON.stringify(web.json));
    assert.equal(web.json.application_type, 'web');
    // Without it (v1 SDK clients), the OIDC default web still takes a loopback redirect.
    const unset = await register({ ...base, redirect_uris: ['http://127.0.0.1:49153/callback'] });
    assert.equal(unset.status, 201, JSON.stringify(unset.json));
    const bogus = await register({ ...base, application_type: 'desktop', redirect_uris: ['http://127.0.0.1:49154/callback'] });
    assert.equal(bogus.status, 400);
    assert.equal(bogus.json.error, 'invalid_client_metadata');
  });
});
