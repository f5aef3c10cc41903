import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey } from 'viem/accounts';
import { completeSignIn, openBrowser, startRedirectCatcher, type BrowserHandle, type RedirectCatcher } from '../support/browser.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import {
  bundleMcpBrowserClient, finishOAuthInPage, listToolsInPage, postUnauthenticatedInPage, refreshTokenInPage, servePage, startOAuthInPage, waitForPageScript, type PageServer,
} from '../support/mcp-browser-client.js';
import { authorizationUrl, pkcePair, registerLoopbackClient, tokenRequest } from '../support/oauth-client.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';

const MCP_HEADERS = ['authorization', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'last-event-id'];
const EXPOSED = ['mcp-session-id', 'mcp-protocol-version', 'www-authenticate'];

const list = (h: string | null) => (h ?? '').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean);
const corsHeaders = (headers: Headers) => [...headers.keys()].filter((k) => k.startsWith('access-control-'));

/**
 * CORS for browser-hosted MCP clients: only origins on MCP_CORS_ORIGINS (the stack runs with
 * NODE_ENV=test, so loopback origins are not allowed by default) read /mcp, the well-known
 * metadata and the token endpoint; the Host guard and the bearer checks apply as before.
 */
describe('mcp: CORS for browser-hosted clients on allowed origins', function () {
  this.timeout(240_000);
  const settings = { env: {} as Record<string, string> };
  let dir: string;
  let allowedPage: PageServer;
  let otherPage: PageServer;

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'cf-cors-'));
    const bundle = await bundleMcpBrowserClient(dir);
    allowedPage = await servePage(bundle);
    otherPage = await servePage(bundle);
    settings.env.MCP_CORS_ORIGINS = `https://inspector.example.com, ${allowedPage.origin}`;
  });

  const isolated = useIsolatedStack(settings);

  after(async function () {
    await allowedPage?.close();
    await otherPage?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let origin: string;
  let mcp: string;
  before(function () {
    origin = new URL(isolated().world.baseUrl).origin;
    mcp = `${origin}/mcp`;
  });

  const preflight = (url: string, from: string, method = 'POST', headers = 'authorization, content-type, mcp-protocol-version', extra: Record<string, string> = {}) =>
    fetch(url, { method: 'OPTIONS', headers: { origin: from, 'access-control-request-method': method, 'access-control-request-headers': headers, ...extra } });

  describe('over plain HTTP', function () {
    it('a preflight from an allowed origin echoes it and lists the methods and headers the MCP transport needs', async function () {
      const res = await preflight(mcp, allowedPage.origin);
      assert.equal(res.status, 204);
      assert.equal(res.headers.get('access-control-allow-origin'), allowedPage.origin);
      assert.ok(list(res.headers.get('vary')).includes('origin'));
      assert.deepEqual(list(res.headers.get('access-control-allow-methods')).sort(), ['delete', 'get', 'post']);
      for (const h of MCP_HEADERS) assert.ok(list(res.headers.get('access-control-allow-headers')).includes(h), h);
      assert.equal(res.headers.get('access-control-allow-credentials'), null, 'no credentials mode: the token is a header');
      const listed = await preflight(mcp, 'https://inspector.example.com');
      assert.equal(listed.headers.get('access-control-allow-origin'), 'https://inspector.example.com');
    });

    it('a preflight from any other origin, loopback on another port included, carries no CORS header', async function () {
      for (const from of [otherPage.origin, 'https://evil.example', 'null', 'https://inspector.example.com.evil.example', 'http://inspector.example.com']) {
        const res = await preflight(mcp, from);
        assert.deepEqual(corsHeaders(res.headers), [], from);
        assert.ok(list(res.headers.get('vary')).includes('origin'), from);
      }
    });

    it('the unauthenticated 401 exposes WWW-Authenticate to an allowed origin; other origins get 403 without CORS', async function () {
      const post = (from: string) =>
        fetch(mcp, {
          method: 'POST',
          headers: { origin: from, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
      const allowed = await post(allowedPage.origin);
      assert.equal(allowed.status, 401);
      assert.match(allowed.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="/);
      assert.equal(allowed.headers.get('access-control-allow-origin'), allowedPage.origin);
      for (const h of EXPOSED) assert.ok(list(allowed.headers.get('access-control-expose-headers')).includes(h), h);
      const other = await post(otherPage.origin);
      assert.equal(other.status, 403);
      assert.deepEqual(corsHeaders(other.headers), []);
    });

    it('a foreign Origin is 403 with a JSON-RPC error before auth, at every protocol revision and method; our own, allowed and absent Origins pass', async function () {
      const { world } = isolated();
      const token = await mintBorrowerToken(world, { borrowerId: randomUUID(), scopes: ['borrower:token'] });
      const call = (from: string | undefined, method: string, version: string | undefined, body?: unknown, extra: Record<string, string> = {}) =>
        fetch(mcp, {
          method,
          headers: {
            ...extra,
            ...(from === undefined ? {} : { origin: from }),
            ...(version === undefined ? {} : { 'mcp-protocol-version': version }),
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'origin-test', version: '1' } } };
      const toolCall = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_borrower_status', arguments: {} } };
      const foreign = [otherPage.origin, 'https://evil.example', 'null', 'https://inspector.example.com.evil.example', 'http://inspector.example.com', `${origin}.evil.example`];
      // 2026-07-28 as its clients send it (served natively): the `_meta` envelope in the body.
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'origin-test', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
      const discover2026 = { jsonrpc: '2.0', id: 5, method: 'server/discover', params: { _meta: meta } };
      const toolCall2026 = { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'get_borrower_status', arguments: {}, _meta: meta } };
      const versions = [undefined, '2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'];
      for (const from of foreign) {
        for (const version of versions) {
          for (const [method, body] of [['POST', toolCall], ['POST', initialize], ['POST', { jsonrpc: '2.0', id: 3, method: 'server/discover' }], ['POST', discover2026], ['POST', toolCall2026], ['GET', undefined], ['DELETE', undefined], ['PUT', {}]] as const) {
            const what = `${method} ${JSON.stringify(body ?? null).slice(0, 60)} from ${from} at ${version}`;
            const res = await call(from, method, version, body);
            assert.equal(res.status, 403, what);
            const json = (await res.json()) as any;
            assert.equal(json.jsonrpc, '2.0', what);
            assert.equal(json.id, null, what);
            assert.equal(json.error.code, -32000, what);
            assert.equal(json.error.data.code, 'FORBIDDEN', what);
            assert.match(json.error.data.requestId, /^req_/, what);
            assert.equal(res.headers.get('www-authenticate'), null, `${what}: refused before auth`);
            assert.deepEqual(corsHeaders(res.headers), [], what);
          }
        }
        // Refused before auth: the same 403 without a token or with garbage.
        const bare = await fetch(mcp, { method: 'POST', headers: { origin: from, 'content-type': 'application/json' }, body: '{' });
        assert.equal(bare.status, 403, from);
      }
      for (const from of [undefined, origin, allowedPage.origin, 'https://inspector.example.com']) {
        const res = await call(from, 'POST', '2025-11-25', { jsonrpc: '2.0', id: 4, method: 'tools/list' });
        assert.equal(res.status, 200, `${from}: ${await res.clone().text()}`);
        const json = (await res.json()) as any;
        assert.ok(json.result?.tools?.length, `${from}: served: ${JSON.stringify(json).slice(0, 200)}`);
        const get = await call(from, 'GET', '2025-11-25');
        assert.equal(get.status, 405, `${from}: GET is still 405`);
        const discovered = await call(from, 'POST', '2026-07-28', discover2026, { 'mcp-method': 'server/discover' });
        assert.equal(discovered.status, 200, `${from} at 2026-07-28: ${await discovered.clone().text()}`);
        assert.deepEqual(((await discovered.json()) as any).result.supportedVersions, ['2026-07-28']);
      }
    });

    it('an allowed origin does not relax auth: a token of a grant that does not stand is still 401 invalid_token', async function () {
      const { world } = isolated();
      const token = await mintBorrowerToken(world, { borrowerId: randomUUID(), scopes: ['borrower:token'], grantId: 'no-such-grant' });
      const res = await fetch(mcp, {
        method: 'POST',
        headers: { origin: allowedPage.origin, authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      assert.equal(res.headers.get('access-control-allow-origin'), allowedPage.origin);
    });

    it('the Host guard answers before CORS: a forged Host gets its 400 and no CORS header', async function () {
      const url = new URL(mcp);
      const answer = await new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
        const req = request(
          { host: url.hostname, port: url.port, path: '/mcp', method: 'OPTIONS', headers: { host: 'rebound.example:80', origin: allowedPage.origin, 'access-control-request-method': 'POST' } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
          },
        );
        req.on('error', reject);
        req.end();
      });
      assert.equal(answer.status, 400);
      assert.deepEqual(Object.keys(answer.headers).filter((k) => k.startsWith('access-control-')), []);
    });

    it('the well-known metadata is readable by an allowed origin only (the authorization server no longer echoes any origin)', async function () {
      const paths = [
        '/.well-known/oauth-protected-resource/mcp',
        '/.well-known/oauth-protected-resource',
        '/.well-known/oauth-authorization-server/oauth',
        '/.well-known/openid-configuration/oauth',
        '/oauth/.well-known/openid-configuration',
      ];
      for (const path of paths) {
        const allowed = await fetch(`${origin}${path}`, { headers: { origin: allowedPage.origin } });
        assert.equal(allowed.status, 200, path);
        assert.equal(allowed.headers.get('access-control-allow-origin'), allowedPage.origin, path);
        const other = await fetch(`${origin}${path}`, { headers: { origin: otherPage.origin } });
        assert.equal(other.status, 200, path);
        assert.deepEqual(corsHeaders(other.headers), [], path);
        const pre = await preflight(`${origin}${path}`, allowedPage.origin, 'GET', 'mcp-protocol-version');
        assert.equal(pre.status, 204, path);
        assert.equal(pre.headers.get('access-control-allow-methods'), 'GET', path);
      }
    });

    it('the token endpoint: an allowed origin gets a preflight and CORS on its answer; another origin is refused outright', async function () {
      const pre = await preflight(`${origin}/oauth/token`, allowedPage.origin, 'POST', 'content-type');
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), allowedPage.origin);
      assert.equal(pre.headers.get('access-control-allow-methods'), 'POST');
      const otherPre = await preflight(`${origin}/oauth/token`, otherPage.origin, 'POST', 'content-type');
      assert.deepEqual(corsHeaders(otherPre.headers), []);

      const clientId = await registerLoopbackClient(origin, 'http://127.0.0.1:9/callback', 'CORS token test');
      const form = (from: string) =>
        fetch(`${origin}/oauth/token`, {
          method: 'POST',
          headers: { origin: from, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'not-a-token', client_id: clientId }).toString(),
        });
      const allowed = await form(allowedPage.origin);
      assert.equal(((await allowed.json()) as { error: string }).error, 'invalid_grant');
      assert.equal(allowed.headers.get('access-control-allow-origin'), allowedPage.origin);
      // A form POST needs no preflight, so the server itself refuses a foreign origin.
      const other = await form(otherPage.origin);
      assert.equal(other.status, 400);
      assert.equal(((await other.json()) as { error: string }).error, 'invalid_request');
      assert.deepEqual(corsHeaders(other.headers), []);
    });

    it('the merchant REST API and the sign-in pages stay closed to browsers, allowed origin or not', async function () {
      for (const path of ['/api/v1/supported', '/api/v1/payments', '/oauth/auth', '/metrics']) {
        const pre = await preflight(`${origin}${path}`, allowedPage.origin, 'GET', 'authorization');
        assert.deepEqual(corsHeaders(pre.headers), [], path);
        const get = await fetch(`${origin}${path}`, { headers: { origin: allowedPage.origin } });
        assert.deepEqual(corsHeaders(get.headers), [], path);
      }
    });
  });

  describe('from real Chromium, a page on another origin running the SDK browser client', function () {
    let browser: BrowserHandle;
    let catcher: RedirectCatcher;
    let clientId: string;
    let tokens: { access_token: string; refresh_token: string };

    before(async function () {
      browser = await openBrowser();
      catcher = await startRedirectCatcher();
      clientId = await registerLoopbackClient(origin, catcher.redirectUri, 'Browser CORS test host');
      const { page } = await browser.newWalletPage(generatePrivateKey());
      const { verifier, challenge } = pkcePair();
      const landed = await completeSignIn(
        page,
        authorizationUrl(origin, { clientId, redirectUri: catcher.redirectUri, scope: 'borrower:token', state: 'cors', challenge, method: 'S256', resource: mcp }),
        catcher.redirectUri,
      );
      await page.close();
      const code = landed.searchParams.get('code');
      assert.ok(code, landed.href);
      const t = await tokenRequest(origin, { grant_type: 'authorization_code', code, redirect_uri: catcher.redirectUri, client_id: clientId, code_verifier: verifier, resource: mcp });
      assert.equal(t.status, 200, JSON.stringify(t.json));
      tokens = t.json as typeof tokens;
    });

    after(async function () {
      await browser?.close();
      await catcher?.close();
    });

    /** A fresh page on `pageOrigin`, with the browser's console kept (CORS refusals are reported there). */
    async function openPage(pageOrigin: string) {
      const context = await browser.browser.newContext();
      const page = await context.newPage();
      const console: string[] = [];
      page.on('console', (m) => console.push(m.text()));
      await page.goto(`${pageOrigin}/`);
      await waitForPageScript(page);
      return { page, console, close: () => context.close() };
    }

    it('lists our tools from an allowed origin, and reads the WWW-Authenticate of an unauthenticated call', async function () {
      const { page, close } = await openPage(allowedPage.origin);
      try {
        const listed = await listToolsInPage(page, mcp, tokens.access_token);
        assert.equal(listed.ok, true, listed.error);
        assert.ok(listed.tools?.includes('register_borrower'), JSON.stringify(listed.tools));
        assert.ok(listed.tools?.includes('get_borrower_status'), JSON.stringify(listed.tools));
        const probe = await postUnauthenticatedInPage(page, mcp);
        assert.equal(probe.ok, true, probe.error);
        assert.equal(probe.status, 401);
        assert.match(probe.challenge ?? '', /^Bearer resource_metadata="/);
      } finally {
        await close();
      }
    });

    it('refreshes its token at the token endpoint from the allowed origin and lists the tools with the new one', async function () {
      const { page, close } = await openPage(allowedPage.origin);
      try {
        const refreshed = await refreshTokenInPage(page, `${origin}/oauth/token`, clientId, tokens.refresh_token);
        assert.equal(refreshed.ok, true, refreshed.error);
        assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
        tokens = refreshed.body!;
        const listed = await listToolsInPage(page, mcp, tokens.access_token);
        assert.equal(listed.ok, true, listed.error);
      } finally {
        await close();
      }
    });

    it("signs in with the SDK's own OAuth flow from the allowed origin: discovery, registration and token exchange in the page", async function () {
      const { page } = await browser.newWalletPage(generatePrivateKey());
      await page.goto(`${allowedPage.origin}/`);
      await waitForPageScript(page);
      startOAuthInPage(page, mcp);
      await page.waitForURL((u) => u.pathname.startsWith('/oauth/interaction/'), { timeout: 30_000 });
      assert.match((await page.textContent('body')) ?? '', /Browser-hosted test client/);
      await page.click('#connect');
      await page.waitForSelector('#sign:not([disabled])', { timeout: 30_000 });
      await page.click('#sign');
      await page.waitForURL((u) => u.origin === allowedPage.origin && u.pathname === '/callback', { timeout: 30_000 });
      assert.ok(new URL(page.url()).searchParams.get('code'), page.url());
      await waitForPageScript(page);
      const listed = await finishOAuthInPage(page, mcp);
      assert.equal(listed.ok, true, listed.error);
      assert.ok(listed.tools?.includes('get_borrower_status'), JSON.stringify(listed.tools));
      await page.close();
    });

    it('the same page on an origin not on the list is refused by the browser: no tools, no 401, no token', async function () {
      const { page, console, close } = await openPage(otherPage.origin);
      try {
        const listed = await listToolsInPage(page, mcp, tokens.access_token);
        assert.equal(listed.ok, false);
        assert.match(listed.error ?? '', /fetch/i);
        const probe = await postUnauthenticatedInPage(page, mcp);
        assert.equal(probe.ok, false, 'the 401 is not readable either');
        const refreshed = await refreshTokenInPage(page, `${origin}/oauth/token`, clientId, tokens.refresh_token);
        assert.equal(refreshed.ok, false);
        assert.ok(console.some((m) => m.includes('blocked by CORS policy')), console.join('\n'));
      } finally {
        await close();
      }
      // The refused refresh did not spend the refresh token: the allowed page can still use it.
      const t = await tokenRequest(origin, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
      assert.equal(t.status, 200, JSON.stringify(t.json));
    });
  });
});
