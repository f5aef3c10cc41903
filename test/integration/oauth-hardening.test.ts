import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mongoAdapterFactory } from '../../src/store/oauth-state.js';
import { bodyTextOf, fuzzCases } from '../helpers/fuzz.js';
import { world, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { authorizationUrl, pkcePair, registerClient, registerLoopbackClient } from '../support/oauth-client.js';

/** One raw HTTP request (node:http, so Host and the source address are ours to choose). */
function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const VALID_REGISTRATION = {
  client_name: 'Hardening test host',
  redirect_uris: ['http://127.0.0.1:43999/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

/** An OAuth error answer (RFC 6749 §5.2 / RFC 7591 §3.2.2 shape). */
function assertOAuthError(status: number, json: any, allowed: readonly string[], context: string): void {
  assert.equal(status, 400, `${context}: expected 400, got ${status} ${JSON.stringify(json)}`);
  assert.ok(allowed.includes(json?.error), `${context}: error ${JSON.stringify(json?.error)} not in ${allowed.join(', ')}`);
  assert.equal(typeof json.error_description, 'string', context);
}

describe('OAuth authorization server hardening (issue 10, item 7)', function () {
  this.timeout(240_000);
  let w: World;
  let origin: string;

  before(async function () {
    w = await world();
    origin = new URL(w.baseUrl).origin;
  });

  describe('open redirects: only redirect_uris, under the redirect policy', function () {
    it('refuses post_logout_redirect_uris and every other URI the server would fetch or redirect to', async function () {
      for (const [key, value] of [
        ['post_logout_redirect_uris', ['https://evil.example/pwn']],
        ['initiate_login_uri', 'https://evil.example/login'],
        ['jwks_uri', 'http://169.254.169.254/latest/meta-data'],
        ['sector_identifier_uri', 'https://evil.example/sector.json'],
      ] as const) {
        const r = await registerClient(origin, { ...VALID_REGISTRATION, [key]: value });
        assertOAuthError(r.status, r.json, ['invalid_client_metadata'], key);
        assert.match(r.json.error_description, new RegExp(key));
      }
    });

    it('has no logout endpoint to redirect through, and metadata advertises none', async function () {
      const clientId = await registerLoopbackClient(origin, 'http://127.0.0.1:43999/callback');
      const q = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: 'https://evil.example/pwn' });
      for (const method of ['GET', 'POST'] as const) {
        const res = await fetch(`${origin}/oauth/session/end?${q}`, { method, redirect: 'manual' });
        assert.ok(res.status < 300 || res.status >= 400, `${method} /oauth/session/end answered ${res.status}`);
        assert.equal(res.headers.get('location'), null);
        await res.body?.cancel();
      }
      const m = (await (await fetch(`${origin}/.well-known/oauth-authorization-server/oauth`)).json()) as Record<string, unknown>;
      assert.equal(m.end_session_endpoint, undefined);
    });
  });

  describe('registration documents: types and sizes', function () {
    it('answers malformed documents with 400 invalid_client_metadata, never 5xx', async function () {
      const cases: Record<string, unknown>[] = [
        { ...VALID_REGISTRATION, redirect_uris: [{ href: 'http://127.0.0.1:1/cb' }] },
        { ...VALID_REGISTRATION, redirect_uris: [{ toString: 'http://127.0.0.1:1/cb' }] },
        { ...VALID_REGISTRATION, redirect_uris: [{ toString: 1, valueOf: 2 }] },
        { ...VALID_REGISTRATION, grant_types: [{ toString: 1 }], response_types: [{ toString: 1 }] },
        { ...VALID_REGISTRATION, redirect_uris: [['http://127.0.0.1:1/cb']] },
        { ...VALID_REGISTRATION, redirect_uris: [42] },
        { ...VALID_REGISTRATION, redirect_uris: [null] },
        { ...VALID_REGISTRATION, redirect_uris: 'http://127.0.0.1:1/cb' },
        { ...VALID_REGISTRATION, redirect_uris: { 0: 'http://127.0.0.1:1/cb' } },
        { ...VALID_REGISTRATION, grant_types: [{}] },
        { ...VALID_REGISTRATION, response_types: 'code' },
        { ...VALID_REGISTRATION, client_name: { en: 'x' } },
        { ...VALID_REGISTRATION, client_name: ['x'] },
        { ...VALID_REGISTRATION, scope: ['borrower:token'] },
        { ...VALID_REGISTRATION, token_endpoint_auth_method: 7 },
        { ...VALID_REGISTRATION, contacts: [{ email: 'a@b.c' }] },
        { ...VALID_REGISTRATION, default_max_age: 'forever' },
        { ...VALID_REGISTRATION, require_auth_time: 'yes' },
        { ...VALID_REGISTRATION, client_name: 'x'.repeat(5_000) },
        { ...VALID_REGISTRATION, redirect_uris: Array.from({ length: 50 }, (_, i) => `http://127.0.0.1:${1000 + i}/cb`) },
        { ...VALID_REGISTRATION, extra: 'x'.repeat(2_000) },
      ];
      for (const doc of cases) {
        const r = await registerClient(origin, doc);
        assertOAuthError(r.status, r.json, ['invalid_client_metadata', 'invalid_redirect_uri'], JSON.stringify(doc).slice(0, 160));
      }
      for (const body of ['[]', 'null', '"x"', '{', '{"redirect_uris":']) {
        const r = await fetch(`${origin}/oauth/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        assertOAuthError(r.status, await r.json(), ['invalid_client_metadata', 'invalid_request'], body);
      }
    });

    it('caps the registration document at 8 KB (a 45 KB document is refused, not stored)', async function () {
      const before = await w.store.db.collection('oauth_client').countDocuments();
      const big = { ...VALID_REGISTRATION, client_name: 'Big', pad: Array.from({ length: 45 }, () => 'x'.repeat(1000)) };
      const r = await registerClient(origin, big);
      assertOAuthError(r.status, r.json, ['invalid_client_metadata'], '45 KB document');
      const padded = { ...VALID_REGISTRATION, logo_uri: `https://agent.example.com/${'x'.repeat(1000)}`, tos_uri: `https://agent.example.com/${'y'.repeat(1000)}`, z: 'z'.repeat(1000), y: 'y'.repeat(1000), x: 'x'.repeat(1000), v: 'v'.repeat(1000), u: 'u'.repeat(1000), t: 't'.repeat(1000), s: 's'.repeat(1000) };
      const r2 = await registerClient(origin, padded);
      assertOAuthError(r2.status, r2.json, ['invalid_client_metadata'], '9 KB of fields under 1 KB each');
      assert.equal(await w.store.db.collection('oauth_client').countDocuments(), before);
    });

    it('fuzz: registration never answers 5xx; a refusal is an OAuth error', async function () {
      const ran = await fuzzCases(
        bodyTextOf(VALID_REGISTRATION),
        async (body) => {
          const res = await fetch(`${origin}/oauth/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          const text = await res.text();
          assert.ok(res.status < 500, `POST /oauth/reg ${body.slice(0, 300)} answered ${res.status} ${text.slice(0, 300)}`);
          if (res.status === 201) return;
          const json = JSON.parse(text) as { error?: unknown; error_description?: unknown };
          assert.equal(res.status, 400, `${body.slice(0, 300)} answered ${res.status}`);
          assert.ok(['invalid_client_metadata', 'invalid_redirect_uri', 'invalid_request'].includes(json.error as string), `${body.slice(0, 300)} -> ${text.slice(0, 300)}`);
          assert.equal(typeof json.error_description, 'string');
        },
        { cases: Number(process.env.FUZZ_CASES ?? 320) },
      );
      assert.ok(ran >= 320);
    });
  });

  describe('unused clients expire', function () {
    it('stores a registered client with an expiry, which a grant extends to its own (never forever)', async function () {
      const t0 = Date.now();
      const clientId = await registerLoopbackClient(origin, 'http://127.0.0.1:43999/callback');
      const doc = await w.store.db.collection<{ _id: string; expiresAt: Date | null }>('oauth_client').findOne({ _id: clientId });
      assert.ok(doc?.expiresAt, 'a new client carries an expiry');
      const hours = (doc.expiresAt.getTime() - t0) / 3600_000;
      assert.ok(hours > 23.9 && hours < 24.1, `expires in ${hours} h`);

      // The adapter the server uses, on the same database, at chosen times.
      let now = Date.now();
      const adapter = mongoAdapterFactory(() => w.store.db, () => now, { unusedClientTtlMs: 24 * 3600_000 });
      const unused = await registerLoopbackClient(origin, 'http://127.0.0.1:43999/callback');
      const used = await registerLoopbackClient(origin, 'http://127.0.0.1:43999/callback');
      const shortGrant = await registerLoopbackClient(origin, 'http://127.0.0.1:43999/callback');
      await adapter('Grant').upsert(`grant-${used}`, { clientId: used, accountId: 'nobody' }, 30 * 24 * 3600);
      await adapter('Grant').upsert(`grant-${shortGrant}`, { clientId: shortGrant, accountId: 'nobody' }, 3600);
      now += 25 * 3600_000;
      assert.equal(await adapter('Client').find(unused), undefined, 'a client nobody granted anything is gone after 24 h');
      assert.equal((await adapter('Client').find(used))?.client_id, used, 'a client with a standing grant stays');
      assert.equal(await adapter('Client').find(shortGrant), undefined, 'a grant never shortens the registration expiry, and is not kept past it');
      now += 30 * 24 * 3600_000;
      assert.equal(await adapter('Client').find(used), undefined, 'and goes when its last grant has expired');
      // And the server itself no longer knows an expired client.
      await w.store.db.collection('oauth_client').updateOne({ _id: unused as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
      const { challenge } = pkcePair();
      const res = await fetch(authorizationUrl(origin, { clientId: unused, redirectUri: 'http://127.0.0.1:43999/callback', scope: 'borrower:token', state: 's', challenge, method: 'S256' }), { redirect: 'manual' });
      assert.equal(res.status, 400, 'an expired client is unknown');
      await res.body?.cancel();
    });
  });

  describe('RFC 9207', function () {
    it('every authorization response carries iss = the issuer, and metadata says so', async function () {
      const m = (await (await fetch(`${origin}/.well-known/oauth-authorization-server/oauth`)).json()) as Record<string, unknown>;
      assert.equal(m.authorization_response_iss_parameter_supported, true);
      const clientId = await registerLoopbackClient(origin, 'http://127.0.0.1:43999/callback');
      const res = await fetch(authorizationUrl(origin, { clientId, redirectUri: 'http://127.0.0.1:43999/callback', scope: 'borrower:token', state: 's9207' }), { redirect: 'manual' });
      assert.equal(res.status, 303);
      const location = new URL(res.headers.get('location') as string);
      assert.equal(location.searchParams.get('error'), 'invalid_request');
      assert.equal(location.searchParams.get('iss'), `${origin}/oauth`);
      // The code response is checked in borrower-web-signin.test (it needs the browser sign-in).
    });
  });

  describe('HTML pages cannot be framed', function () {
    function assertNoFraming(headers: Headers, what: string): void {
      assert.equal(headers.get('x-frame-options'), 'DENY', `${what}: X-Frame-Options`);
      const csp = headers.get('content-security-policy') ?? '';
      assert.match(csp, /frame-ancestors 'none'/, `${what}: CSP ${csp}`);
      assert.match(csp, /default-src 'none'/, `${what}: CSP ${csp}`);
    }

    it('on oidc-provider error pages, form_post responses and our sign-in page', async function () {
      const err = await fetch(`${origin}/oauth/auth?client_id=nobody&response_type=code`, { redirect: 'manual' });
      assert.equal(err.status, 400);
      assert.match(err.headers.get('content-type') ?? '', /html/);
      assertNoFraming(err.headers, 'error page');
      await err.body?.cancel();

      const clientId = await registerLoopbackClient(origin, 'http://127.0.0.1:43999/callback');
      const formPost = await fetch(
        `${authorizationUrl(origin, { clientId, redirectUri: 'http://127.0.0.1:43999/callback', scope: 'borrower:token', state: 'fp' })}&response_mode=form_post`,
        { redirect: 'manual' },
      );
      assert.equal(formPost.status, 400);
      const html = await formPost.text();
      assert.match(html, /<form method="post" action="http:\/\/127\.0\.0\.1:43999\/callback"/);
      assertNoFraming(formPost.headers, 'form_post');
      assert.match(formPost.headers.get('content-security-policy') ?? '', /script-src 'self' 'sha256-/, 'the form_post script is allowed by its hash');

      const { challenge } = pkcePair();
      const start = await fetch(authorizationUrl(origin, { clientId, redirectUri: 'http://127.0.0.1:43999/callback', scope: 'borrower:token', state: 'si', challenge, method: 'S256' }), { redirect: 'manual' });
      assert.equal(start.status, 303);
      const cookies = start.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const page = await fetch(new URL(start.headers.get('location') as string, origin), { headers: { cookie: cookies } });
      assert.equal(page.status, 200);
      assertNoFraming(page.headers, 'sign-in page');
      await page.body?.cancel();
    });
  });

  describe('Host pinned to PUBLIC_ORIGIN on OAuth and MCP routes', function () {
    it('refuses another Host with 400 INVALID_REQUEST and serves the public one', async function () {
      const port = new URL(origin).port;
      for (const path of ['/.well-known/oauth-authorization-server/oauth', '/oauth/.well-known/openid-configuration', '/oauth/auth', '/.well-known/oauth-protected-resource/mcp', '/mcp']) {
        for (const host of [`evil.example:${port}`, `localhost:${port}`, `127.0.0.1:1`, 'evil.example']) {
          const r = await rawRequest(`${origin}${path}`, { headers: { host } });
          assert.equal(r.status, 400, `${path} with Host ${host}: ${r.status} ${r.text.slice(0, 200)}`);
          const body = JSON.parse(r.text) as { error: { code: string; message: string } };
          assert.equal(body.error.code, 'INVALID_REQUEST');
          assert.ok(!r.text.includes('evil.example/oauth'), 'nothing is built from the forged host');
        }
      }
      const ok = await rawRequest(`${origin}/.well-known/oauth-authorization-server/oauth`, { headers: { host: `127.0.0.1:${port}` } });
      assert.equal(ok.status, 200);
      assert.equal((JSON.parse(ok.text) as { issuer: string }).issuer, `${origin}/oauth`);
      // X-Forwarded-Host counts only behind a proxy (PUBLIC_ORIGIN set); here it changes nothing.
      const fwd = await rawRequest(`${origin}/.well-known/oauth-authorization-server/oauth`, { headers: { host: `127.0.0.1:${port}`, 'x-forwarded-host': 'evil.example' } });
      assert.equal(fwd.status, 200);
      assert.equal((JSON.parse(fwd.text) as { issuer: string }).issuer, `${origin}/oauth`);
      // The merchant REST API is not pinned.
      const health = await rawRequest(`${origin}/api/v1/facilitator/health`, { headers: { host: `localhost:${port}` } });
      assert.notEqual(health.status, 400);
    });
  });
});

describe('OAuth hardening on a stack of its own: registration rate limit, PUBLIC_ORIGIN behind a proxy', function () {
  this.timeout(240_000);
  const stack = useIsolatedStack({ env: { OAUTH_DCR_PER_MIN: '1', OAUTH_DCR_BURST: '3', PUBLIC_ORIGIN: 'https://cf.example' } });

  it('limits registrations per source address with 429, Retry-After and the OAuth error shape', async function () {
    const base = `http://127.0.0.1:${stack().stack.env.API_PORT}`;
    const headers = { 'content-type': 'application/json', 'x-forwarded-host': 'cf.example' };
    const body = JSON.stringify(VALID_REGISTRATION);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await rawRequest(`${base}/oauth/reg`, { method: 'POST', headers, body, localAddress: '127.0.0.41' })).status);
    assert.deepEqual(statuses, [201, 201, 201, 429, 429]);
    const limited = await rawRequest(`${base}/oauth/reg`, { method: 'POST', headers, body, localAddress: '127.0.0.41' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    const json = JSON.parse(limited.text) as { error: string; error_description: string };
    assert.equal(json.error, 'rate_limited');
    assert.equal(typeof json.error_description, 'string');
    // Another address has its own bucket; malformed documents count too (flooding with junk is limited).
    assert.equal((await rawRequest(`${base}/oauth/reg`, { method: 'POST', headers, body, localAddress: '127.0.0.42' })).status, 201);
    for (let i = 0; i < 2; i++) assert.equal((await rawRequest(`${base}/oauth/reg`, { method: 'POST', headers, body: '[]', localAddress: '127.0.0.42' })).status, 400);
    assert.equal((await rawRequest(`${base}/oauth/reg`, { method: 'POST', headers, body, localAddress: '127.0.0.42' })).status, 429);
  });

  it('behind a proxy the forwarded host must be the public one, and the metadata is built from PUBLIC_ORIGIN', async function () {
    const base = `http://127.0.0.1:${stack().stack.env.API_PORT}`;
    const good = await rawRequest(`${base}/.well-known/oauth-authorization-server/oauth`, { headers: { 'x-forwarded-host': 'cf.example', 'x-forwarded-proto': 'https' } });
    assert.equal(good.status, 200, good.text);
    const m = JSON.parse(good.text) as { issuer: string; authorization_endpoint: string };
    assert.equal(m.issuer, 'https://cf.example/oauth');
    assert.equal(m.authorization_endpoint, 'https://cf.example/oauth/auth');
    for (const headers of [{}, { 'x-forwarded-host': 'evil.example' }, { host: 'evil.example' }] as Record<string, string>[]) {
      const bad = await rawRequest(`${base}/.well-known/oauth-authorization-server/oauth`, { headers });
      assert.equal(bad.status, 400, JSON.stringify(headers));
      assert.equal((JSON.parse(bad.text) as { error: { code: string } }).error.code, 'INVALID_REQUEST');
    }
  });
});
