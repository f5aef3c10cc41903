import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { generateWorkloadKey } from '@credit-facilitator/agent-client/workload-key';
import { mcpUrl, oauthIssuer } from '../../src/config/env.js';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import type { DemoMerchant } from '../../examples/demo-merchant/app.js';
import { openBrowser, startRedirectCatcher, type BrowserHandle, type RedirectCatcher } from '../support/browser.js';
import { makeTestCa, startCimdHost, type CimdHost } from '../support/cimd-host.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { assertPaidAndSettled, assertSpokeRevision, JOURNEY_ERAS, openShop, V2AgentHost } from '../support/sdk-v2-journey.js';
import type { TestMerchant, World } from '../helpers/world.js';

const DOCUMENT_PATH = '/agents/v2-host.json';

/**
 * The v2 SDK journey of agent-e2e-sdk-v2.test.ts with a client that identifies itself by a Client
 * ID Metadata Document (MCP 2025-11-25) instead of registering: the stock
 * `@modelcontextprotocol/client` provider's `clientMetadataUrl`, published by a local HTTPS server
 * under a test CA (OAUTH_CIMD_TEST_CA_FILE). The host skips one refresh, so the transport's own
 * step-up runs early in onboarding: it costs one sign-in, and refreshes suffice from then on. It runs
 * in each era of JOURNEY_ERAS (initialize at 2025-11-25, and pinned to 2026-07-28).
 */
for (const era of JOURNEY_ERAS) describe(`agent end to end with the v2 SDK and a client ID metadata document (CIMD), ${era.name}: onboard, one step-up, pay`, function () {
  this.timeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'cf-v2cimd-'));
  const borrowerKey = generatePrivateKey();
  const borrowerWallet = privateKeyToAccount(borrowerKey).address;
  const workloadKey = generateWorkloadKey();
  let cimd: CimdHost;
  let catcher: RedirectCatcher;
  let browser: BrowserHandle | undefined;
  let host: V2AgentHost;
  let w: World;
  let url: URL;
  let clientId: string;
  let merchant: TestMerchant;
  let shop: DemoMerchant | undefined;

  before(async function () {
    cimd = await startCimdHost(makeTestCa(dir));
    catcher = await startRedirectCatcher();
  });
  const stackOf = useIsolatedStack({ env: { OAUTH_CIMD_TEST_CA_FILE: join(dir, 'ca.pem') } });
  before(async function () {
    w = stackOf().world;
    url = new URL(mcpUrl(w.cli.env));
    browser = await openBrowser();
    clientId = `${cimd.origin}${DOCUMENT_PATH}`;
    host = new V2AgentHost(url, (await browser.newWalletPage(borrowerKey)).page, catcher.redirectUri, { clientName: 'CIMD v2 agent host', clientMetadataUrl: clientId, versionNegotiation: era.versionNegotiation });
    // What the host publishes: the metadata it would otherwise register, as the SDK completes it
    // for a loopback redirect (a native app, RFC 8252).
    cimd.serveDocument(
      DOCUMENT_PATH,
      { ...host.provider.clientMetadata, application_type: 'native', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
      { 'cache-control': 'max-age=600' },
    );
    ({ merchant, shop } = await openShop(w, 'V2 CIMD Shop'));
  });

  after(async function () {
    await host?.close();
    await shop?.close();
    await browser?.close();
    await catcher?.close();
    await cimd?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('identifies by its document URL, onboards with one step-up sign-in, and pays the merchant to CONFIRMED', async function () {
    const { sent, authorizations, callbacks, signIns } = host;
    await host.start();

    // CIMD, not DCR: the SDK saw client_id_metadata_document_supported and used the URL as client_id.
    assert.ok(!sent.some((s) => s.method === 'POST' && s.url.endsWith('/oauth/reg')), 'no registration');
    assert.equal(host.provider.clientInformation()?.client_id, clientId);
    assert.equal(authorizations[0]!.searchParams.get('client_id'), clientId);
    assert.ok(sent.some((s) => s.url.endsWith('/oauth/token') && new URLSearchParams(s.body).get('client_id') === clientId), 'the code was exchanged as the document URL');
    assert.equal(callbacks[0]!.searchParams.get('iss'), oauthIssuer(w.cli.env));
    assert.ok(cimd.hits(DOCUMENT_PATH) >= 1, 'the server fetched the document');
    assert.deepEqual(signIns, [{ clientName: 'CIMD v2 agent host', clientHost: new URL(cimd.origin).host }], 'the sign-in page named the client and the host publishing it');

    // The challenge on the real stack, read as plain HTTP: the token carries the SIGNED_IN scope
    // only, the challenge asks for the needed scope with every scope the borrower consented to.
    const token = host.provider.tokens()?.access_token;
    assert.ok(token);
    assert.deepEqual([...host.heldScopes()], ['borrower:token']);
    const early = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'accept_credit_facility', arguments: { idempotency_key: 'x' } } }),
    });
    assert.equal(early.status, 403);
    const challenge = early.headers.get('www-authenticate') ?? '';
    assert.ok(challenge.startsWith('Bearer error="insufficient_scope", ') && challenge.includes(`scope="${SCOPES.join(' ')}"`), challenge);
    assert.equal(((await early.json()) as { error: { data: { scope: string } } }).error.data.scope, 'credit:facility:accept');

    // No refresh after register_borrower: accept_credit_facility meets 403 insufficient_scope and the
    // transport re-authorises with the challenged scopes. Every later stage is picked up by a refresh.
    const { borrowerId, operationalAgentId } = await host.onboard({
      wallet: borrowerWallet, workloadKey, label: 'v2 cimd laptop',
      refreshAfter: ['accept_credit_facility', 'register_agent_key', 'claim_handle'],
      afterStep: (step) => {
        if (step !== 'accept_credit_facility') return;
        // Least privilege: the step-up asked for every consented scope; the token got the stage's.
        assert.deepEqual([...host.heldScopes()].sort(), ['borrower:token', 'credit:facility:accept']);
      },
    });
    assert.equal(authorizations.length, 2, 'one step-up authorization in the whole onboarding');
    assert.equal(signIns.length, 2, 'the step-up cost the borrower one sign-in');
    assert.deepEqual(authorizations[1]!.searchParams.get('scope')?.split(' '), [...SCOPES], 'the step-up asked for the whole consent, as challenged');
    assert.equal(callbacks[1]!.searchParams.get('iss'), oauthIssuer(w.cli.env));
    for (const s of SCOPES) assert.ok(host.heldScopes().has(s), `the refresh at ACTIVE brought ${s}`);

    const paid = await host.pay(shop!.url, workloadKey, operationalAgentId);
    assert.equal(authorizations.length, 2, 'paying needed no authorization');
    await assertPaidAndSettled(w, merchant, paid, borrowerId);
    assert.equal(host.negotiatedVersion(), era.version);
    assertSpokeRevision(sent, url, era.version);
  });
});
