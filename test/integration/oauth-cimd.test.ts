import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey } from 'viem/accounts';
import { openBrowser, startRedirectCatcher, type BrowserHandle, type RedirectCatcher } from '../support/browser.js';
import { makeTestCa, startCimdHost, type CimdHost } from '../support/cimd-host.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { authorizationUrl, pkcePair, registerLoopbackClient, tokenRequest } from '../support/oauth-client.js';

/**
 * Client ID Metadata Documents (issue 10, item 1): an https URL as client_id, its document served
 * by a local HTTPS server under a CA made for this test, which the stack trusts only through the
 * test-only OAUTH_CIMD_TEST_CA_FILE (that setting also lets a CIMD host resolve to loopback).
 */
describe('OAuth: client ID metadata documents (CIMD)', function () {
  this.timeout(240_000);
  const dir = mkdtempSync(join(tmpdir(), 'cf-cimd-'));
  const caFile = join(dir, 'ca.pem');
  let host: CimdHost;
  let catcher: RedirectCatcher;
  let browser: BrowserHandle | undefined;
  let origin: string;
  let mcp: string;

  before(async function () {
    host = await startCimdHost(makeTestCa(dir));
    catcher = await startRedirectCatcher();
  });
  const stackOf = useIsolatedStack({ env: { OAUTH_CIMD_TEST_CA_FILE: caFile } });
  before(async function () {
    origin = new URL(stackOf().world.baseUrl).origin;
    mcp = `${origin}/mcp`;
  });

  after(async function () {
    await browser?.close();
    await catcher?.close();
    await host?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const publicClient = (name: string) => ({
    client_name: name,
    application_type: 'native',
    redirect_uris: [catcher.redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  });

  /** GET /oauth/auth for `clientId` without a browser: the status and the page (or redirect) it answers. */
  async function authorize(clientId: string, redirectUri = catcher.redirectUri) {
    const { challenge } = pkcePair();
    const res = await fetch(authorizationUrl(origin, { clientId, redirectUri, scope: 'borrower:token', state: 's1', challenge, method: 'S256', resource: mcp }), { redirect: 'manual' });
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }

  async function assertRefused(clientId: string, error: string, reason: RegExp, redirectUri?: string) {
    const r = await authorize(clientId, redirectUri);
    assert.equal(r.status, 400, `${clientId}: ${r.status} ${r.location ?? ''} ${r.text.slice(0, 300)}`);
    assert.equal(r.location, null, 'an unverified client is never redirected to');
    assert.ok(r.text.includes(error), `${clientId}: expected ${error} in ${r.text.slice(0, 600)}`);
    assert.match(r.text.replace(/&#(\d+);/g, (_m, c: string) => String.fromCharCode(Number(c))), reason);
  }

  it('advertises client_id_metadata_document_supported in the AS metadata', async function () {
    const m = (await (await fetch(`${origin}/.well-known/oauth-authorization-server/oauth`)).json()) as Record<string, unknown>;
    assert.equal(m.client_id_metadata_document_supported, true);
    assert.ok(typeof m.registration_endpoint === 'string', 'DCR stays advertised');
  });

  it('a CIMD client completes authorization code + PKCE in Chromium; the page names it and its host; the token works at /mcp', async function () {
    const clientId = host.serveDocument('/agents/good.json', { ...publicClient('CIMD <b>test</b> agent'), client_uri: `${host.origin}/` }, { 'cache-control': 'max-age=600' });
    browser = await openBrowser();
    const { page } = await browser.newWalletPage(generatePrivateKey());
    const { verifier, challenge } = pkcePair();
    await page.goto(authorizationUrl(origin, { clientId, redirectUri: catcher.redirectUri, scope: 'borrower:token', state: 'cimd-1', challenge, method: 'S256', resource: mcp }));
    await page.waitForURL((u) => u.pathname.startsWith('/oauth/interaction/'), { timeout: 30_000 });
    assert.equal(await page.textContent('#client-name'), 'CIMD <b>test</b> agent', 'the name is shown as text, escaped');
    assert.equal(await page.locator('#client-name b').count(), 0);
    assert.equal(await page.textContent('#client-host'), new URL(host.origin).host);
    await page.click('#connect');
    await page.waitForSelector('#sign:not([disabled])', { timeout: 30_000 });
    await page.click('#sign');
    await page.waitForURL((u) => u.href.startsWith(catcher.redirectUri), { timeout: 30_000 });
    const landed = new URL(page.url());
    const code = landed.searchParams.get('code');
    assert.ok(code, landed.href);
    assert.equal(landed.searchParams.get('state'), 'cimd-1');

    const t = await tokenRequest(origin, { grant_type: 'authorization_code', code, redirect_uri: catcher.redirectUri, client_id: clientId, code_verifier: verifier, resource: mcp });
    assert.equal(t.status, 200, JSON.stringify(t.json));
    const res = await fetch(mcp, {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${t.json.access_token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const body = await res.text();
    assert.equal(res.status, 200, body);
    assert.match(body, /"tools"/);

    const refreshed = await tokenRequest(origin, { grant_type: 'refresh_token', refresh_token: t.json.refresh_token, client_id: clientId, resource: mcp });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    // max-age=600: the document was fetched once for the authorization, the sign-in page and both token requests.
    assert.equal(host.hits('/agents/good.json'), 1);
  });

  it('refuses documents on private, link-local or loopback-mapped addresses, and redirects, before connecting', async function () {
    for (const [url, ip] of [
      ['https://10.0.0.1/client.json', '10.0.0.1'],
      ['https://169.254.169.254/latest/meta-data/client.json', '169.254.169.254'],
      ['https://192.168.1.1/client.json', '192.168.1.1'],
      ['https://[fd00::1]/client.json', 'fd00::1'],
      ['https://[::ffff:10.0.0.1]/client.json', '::ffff:a00:1'],
    ] as const) {
      await assertRefused(url, 'invalid_client', new RegExp(`${ip.replace(/[.[\]]/g, '\\$&')} is a private, loopback, link-local or otherwise non-public address`));
    }
    const redirecting = host.serve('/agents/redirect.json', (res) => {
      res.writeHead(302, { location: 'https://10.0.0.1/client.json' });
      res.end();
    });
    await assertRefused(redirecting, 'invalid_client', /answered 302; redirects are not followed/);
  });

  it('refuses an oversized document (5 KB cap, also when streamed without a length)', async function () {
    const big = host.serveDocument('/agents/big.json', { ...publicClient('Big'), padding: 'x'.repeat(6_000) });
    await assertRefused(big, 'invalid_client', /larger than 5120 bytes/);
    const streamed = host.serve('/agents/streamed.json', (res, url) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const doc = JSON.stringify({ client_id: url, ...publicClient('Streamed'), padding: 'y'.repeat(8_000) });
      for (let i = 0; i < doc.length; i += 1000) res.write(doc.slice(i, i + 1000));
      res.end();
    });
    await assertRefused(streamed, 'invalid_client', /larger than 5120 bytes/);
  });

  it('refuses a slow document (2.5 s for the whole exchange)', async function () {
    const slow = host.serve('/agents/slow.json', (res, url) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"client_id":${JSON.stringify(url)},`);
      setTimeout(() => res.end(`"client_name":"Slow","redirect_uris":${JSON.stringify([catcher.redirectUri])}}`), 4_000).unref();
    });
    const started = Date.now();
    await assertRefused(slow, 'invalid_client', /no complete answer within 2.5 s/);
    assert.ok(Date.now() - started < 4_000, 'gave up before the document was complete');
  });

  it('refuses a redirect_uri the document does not list, and documents listing redirect URIs on other hosts', async function () {
    const clientId = host.serveDocument('/agents/listed.json', publicClient('Listed'));
    await assertRefused(clientId, 'invalid_redirect_uri', /redirect_uri did not match/, `${new URL(catcher.redirectUri).origin}/elsewhere`);
    const foreign = host.serveDocument('/agents/foreign.json', { ...publicClient('Foreign'), redirect_uris: ['https://evil.example/cb'] });
    await assertRefused(foreign, 'invalid_redirect_uri', /https:\/\/evil\.example\/cb is not allowed; a client metadata document may list loopback http redirect URIs or https URIs on its own host \(localhost\)/);
  });

  it('refuses a document whose client_id is not its URL, that is not JSON, or that is not a public client', async function () {
    const other = host.serveDocument('/agents/other.json', { ...publicClient('Impostor'), client_id: `${host.origin}/agents/good.json` });
    await assertRefused(other, 'invalid_client_metadata', /client_id does not match/);
    const html = host.serve('/agents/page.json', (res, url) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(JSON.stringify({ client_id: url, ...publicClient('Html') }));
    });
    await assertRefused(html, 'invalid_client', /not application\/json/);
    const confidential = host.serveDocument('/agents/pkjwt.json', { ...publicClient('Confidential'), token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `${host.origin}/jwks.json` });
    await assertRefused(confidential, 'invalid_client_metadata', /token_endpoint_auth_method/);
    const { application_type: _native, ...webOnLoopback } = publicClient('Web on loopback');
    const web = host.serveDocument('/agents/web-loopback.json', webOnLoopback);
    await assertRefused(web, 'invalid_client_metadata', /loopback redirect_uris need "application_type": "native"/);
  });

  it('answers the token endpoint with a JSON OAuth error for a client_id whose document cannot be used', async function () {
    const big = `${host.origin}/agents/big.json`;
    const r = await tokenRequest(origin, { grant_type: 'authorization_code', code: 'nope', redirect_uri: catcher.redirectUri, client_id: big, code_verifier: pkcePair().verifier });
    assert.ok(r.status === 400 || r.status === 401, `${r.status} ${JSON.stringify(r.json)}`);
    assert.equal(r.json.error, 'invalid_client');
    assert.equal(typeof r.json.error_description, 'string');
  });

  it('keeps dynamic client registration working beside CIMD', async function () {
    const clientId = await registerLoopbackClient(origin, catcher.redirectUri, 'DCR beside CIMD');
    assert.doesNotMatch(clientId, /^https:/);
    const r = await authorize(clientId);
    assert.equal(r.status, 303, `${r.status} ${r.text.slice(0, 200)}`);
    assert.match(r.location ?? '', /\/oauth\/interaction\//);
  });
});
