import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { generateWorkloadKey } from '@credit-facilitator/agent-client/workload-key';
import { mcpUrl, oauthIssuer } from '../../src/config/env.js';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import type { DemoMerchant } from '../../examples/demo-merchant/app.js';
import { openBrowser, startRedirectCatcher, type BrowserHandle, type RedirectCatcher } from '../support/browser.js';
import { assertPaidAndSettled, assertSpokeRevision, JOURNEY_ERAS, openShop, V2AgentHost } from '../support/sdk-v2-journey.js';
import { world, type TestMerchant, type World } from '../helpers/world.js';

/**
 * The same journey as agent-e2e.test.ts, driven by a stock `@modelcontextprotocol/client` 2.x: its
 * own OAuth (RFC 9728/8414 discovery, DCR with the `application_type` it derives, PKCE, the RFC 9207
 * `iss` check on the callback, scope step-up on 403 insufficient_scope) against our authorization
 * server, the borrower signing every step in headless Chromium, and a paid request that settles.
 * It runs in each era of JOURNEY_ERAS: the client's default initialize (2025-11-25) and pinned to
 * 2026-07-28 (served natively). The CIMD client's journey is agent-e2e-sdk-v2-cimd.test.ts.
 */
for (const era of JOURNEY_ERAS) describe(`agent end to end with the v2 SDK (@modelcontextprotocol/client), ${era.name}: DCR, iss, step-up, a paid request`, function () {
  this.timeout(300_000);
  let w: World;
  let browser: BrowserHandle;
  let catcher: RedirectCatcher;
  let host: V2AgentHost;
  let merchant: TestMerchant;
  let shop: DemoMerchant;
  let url: URL;
  const borrowerKey = generatePrivateKey();
  const borrowerWallet = privateKeyToAccount(borrowerKey).address;
  const workloadKey = generateWorkloadKey();

  before(async () => {
    w = await world();
    url = new URL(mcpUrl(w.cli.env));
    browser = await openBrowser();
    catcher = await startRedirectCatcher();
    // The host "opens the browser": headless Chromium on our sign-in page with the borrower's wallet.
    host = new V2AgentHost(url, (await browser.newWalletPage(borrowerKey)).page, catcher.redirectUri, { versionNegotiation: era.versionNegotiation });
    ({ merchant, shop } = await openShop(w, 'V2 SDK Shop'));
  });

  after(async () => {
    await host?.close();
    await shop?.close();
    await catcher?.close();
    await browser?.close();
  });

  it('onboards with the SDK\'s own OAuth and pays the merchant to CONFIRMED', async () => {
    const { sent, authorizations, callbacks } = host;
    await host.start();
    assert.equal(host.signIns.length, 1, 'the borrower signed in once');

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

    const { borrowerId, operationalAgentId } = await host.onboard({
      wallet: borrowerWallet, workloadKey, label: 'v2 laptop', refreshAfter: ['register_borrower', 'accept_credit_facility', 'register_agent_key'],
    });
    assert.equal(authorizations.length, 1, 'refreshing after each stage needed no new sign-in');

    // No refresh this time: the transport's own step-up (403 insufficient_scope) runs. The token
    // lacks what ACTIVE unlocked, so the SDK asks for a new authorization naming the union of the
    // scopes it holds and those challenged; the challenge named the needed scopes with every scope
    // already granted, so the request keeps the whole consent. The borrower signs in once more.
    const heldBefore = host.heldScopes();
    const paid = await host.pay(shop.url, workloadKey, operationalAgentId);
    assert.equal(authorizations.length, 2, 'one step-up authorization');
    assert.equal(host.signIns.length, 2, 'the step-up cost one sign-in (a native client always signs in)');
    const stepUp = new Set((authorizations[1]!.searchParams.get('scope') ?? '').split(' '));
    for (const s of ['spend:intent:create', 'policy:evaluate', 'signing:request', ...heldBefore]) assert.ok(stepUp.has(s), `step-up asks for ${s}`);
    assert.ok(!heldBefore.has('repayment:execute'));
    for (const s of SCOPES) assert.ok(stepUp.has(s), `step-up asks for ${s}: consented at the first sign-in, named by the challenge`);

    await assertPaidAndSettled(w, merchant, paid, borrowerId);

    assert.equal(host.negotiatedVersion(), era.version);
    assertSpokeRevision(sent, url, era.version);
  });

  // Once: what follows does not depend on the era the journey ran in.
  if (era !== JOURNEY_ERAS[0]) return;

  it('answers the stateless and the session forms, 2025-06-18 and 2025-11-25, and serves a 2026-07-28 client natively', async () => {
    const token = host.provider.tokens()?.access_token;
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

    // The 2026-07-28 era probe: answered natively, to the probe's own id.
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const probe = await post({ jsonrpc: '2.0', id: 'probe-1', method: 'server/discover', params: { _meta: meta } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' });
    assert.equal(probe.status, 200);
    const discovered = (await probe.json()) as { id: unknown; result: { supportedVersions: string[] } };
    assert.equal(discovered.id, 'probe-1');
    assert.deepEqual(discovered.result.supportedVersions, ['2026-07-28']);

    // The stock v2 client negotiating its era (versionNegotiation auto) now settles on 2026-07-28.
    const probing = await host.connect({ versionNegotiation: { mode: 'auto' } });
    try {
      const tools = await probing.client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'prepare_x402_payment'));
      assert.equal(probing.client.getNegotiatedProtocolVersion(), '2026-07-28', 'the modern era, natively');
    } finally {
      await probing.client.close();
    }
    const probes = host.sent.filter((s) => s.body?.includes('"server/discover"'));
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
