import assert from 'node:assert/strict';
import { authorizationUrl, pkcePair, registerClient, registerLoopbackClient } from '../support/oauth-client.js';
import { world, type World } from '../helpers/world.js';

describe('OAuth authorization server: metadata, registration, PKCE', function () {
  let origin: string;
  let w: World;

  before(async function () {
    w = await world();
    origin = new URL(w.baseUrl).origin;
  });

  /** The error an authorization request answers with, as a redirect to the client (RFC 6749 §4.1.2.1). */
  async function authorizationError(url: string): Promise<URLSearchParams> {
    const res = await fetch(url, { redirect: 'manual' });
    assert.equal(res.status, 303, `expected a redirect, got ${res.status}`);
    const location = new URL(res.headers.get('location') as string);
    // Query response mode for code; a token request answers in the fragment.
    return location.hash ? new URLSearchParams(location.hash.slice(1)) : location.searchParams;
  }

  it('publishes RFC 8414 metadata where the MCP SDK looks for it', async function () {
    const res = await fetch(`${origin}/.well-known/oauth-authorization-server/oauth`);
    assert.equal(res.status, 200);
    const m = (await res.json()) as Record<string, any>;
    assert.equal(m.issuer, `${origin}/oauth`);
    assert.equal(m.authorization_endpoint, `${origin}/oauth/auth`);
    assert.equal(m.token_endpoint, `${origin}/oauth/token`);
    assert.equal(m.registration_endpoint, `${origin}/oauth/reg`);
    assert.equal(m.jwks_uri, `${origin}/oauth/jwks`);
    assert.equal(m.revocation_endpoint, `${origin}/oauth/token/revocation`);
    assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(m.response_types_supported, ['code']);
    assert.ok(m.grant_types_supported.includes('authorization_code'));
    assert.ok(m.grant_types_supported.includes('refresh_token'));
    assert.ok(!m.grant_types_supported.includes('implicit'));
    assert.deepEqual(m.token_endpoint_auth_methods_supported, ['none']);
    assert.ok(['borrower:token', 'credit:facility:accept', 'repayment:execute'].every((s) => m.scopes_supported.includes(s)));
    assert.equal(m.authorization_response_iss_parameter_supported, true);

    const oidc = (await (await fetch(`${origin}/oauth/.well-known/openid-configuration`)).json()) as Record<string, any>;
    assert.equal(oidc.issuer, m.issuer);
    assert.equal(oidc.token_endpoint, m.token_endpoint);

    const jwks = (await (await fetch(m.jwks_uri)).json()) as { keys: Record<string, unknown>[] };
    assert.ok(jwks.keys.length >= 1);
    for (const k of jwks.keys) {
      assert.equal(k.kty, 'EC');
      assert.equal(k.d, undefined, 'the JWKS must not publish private key material');
    }
  });

  it('registers public clients with loopback or allow-listed https redirect URIs', async function () {
    for (const uri of ['http://127.0.0.1:43123/callback', 'http://[::1]:43123/callback', 'http://localhost:43123/callback', 'https://agent.example.com/oauth/cb']) {
      const r = await registerClient(origin, {
        client_name: 'Agent host',
        redirect_uris: [uri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'borrower:token credit:facility:accept',
      });
      assert.equal(r.status, 201, `${uri}: ${JSON.stringify(r.json)}`);
      assert.equal(typeof r.json.client_id, 'string');
      assert.equal(r.json.token_endpoint_auth_method, 'none');
      assert.equal(r.json.client_secret, undefined);
      assert.deepEqual(r.json.redirect_uris, [uri]);
    }
  });

  it('takes public clients only: every confidential auth method is 400 invalid_client_metadata and stores nothing; the metadata advertises "none" alone, no DPoP, no PAR', async function () {
    const clients = w.store.db.collection('oauth_client');
    const before = await clients.countDocuments();
    for (const method of ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'tls_client_auth', 'self_signed_tls_client_auth']) {
      const r = await registerClient(origin, {
        client_name: 'Confidential host',
        redirect_uris: ['http://127.0.0.1:43123/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: method,
      });
      assert.equal(r.status, 400, `${method}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error, 'invalid_client_metadata', method);
      assert.match(r.json.error_description, /only public clients/, method);
      assert.equal(r.json.client_secret, undefined, method);
    }
    assert.equal(await clients.countDocuments(), before, 'no confidential client was stored');
    // Leaving the method out registers a public client, without a secret it would never use.
    const unnamed = await registerClient(origin, { client_name: 'No method named', redirect_uris: ['http://127.0.0.1:43123/callback'] });
    assert.equal(unnamed.status, 201, JSON.stringify(unnamed.json));
    assert.equal(unnamed.json.token_endpoint_auth_method, 'none');
    assert.equal(unnamed.json.client_secret, undefined, JSON.stringify(unnamed.json));

    for (const path of ['/.well-known/oauth-authorization-server/oauth', '/.well-known/openid-configuration/oauth']) {
      const m = (await (await fetch(`${origin}${path}`)).json()) as Record<string, unknown>;
      assert.deepEqual(m.token_endpoint_auth_methods_supported, ['none'], path);
      assert.equal(m.token_endpoint_auth_signing_alg_values_supported, undefined, path);
      assert.equal(m.dpop_signing_alg_values_supported, undefined, `${path}: DPoP is not offered`);
      assert.equal(m.pushed_authorization_request_endpoint, undefined, `${path}: PAR is not offered`);
      assert.equal(m.require_pushed_authorization_requests, undefined, path);
    }
    // And the PAR endpoint is not there to use.
    const clientId = await registerLoopbackClient(origin, 'http://127.0.0.1:43123/callback');
    const { challenge } = pkcePair();
    const par = await fetch(`${origin}/oauth/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: 'http://127.0.0.1:43123/callback', scope: 'borrower:token', code_challenge: challenge, code_challenge_method: 'S256' }).toString(),
    });
    assert.equal(par.status, 404, await par.text());
  });

  it('refuses any other redirect URI with invalid_redirect_uri naming the URI', async function () {
    for (const uris of [['https://evil.example/cb'], ['http://example.com/cb'], ['http://127.0.0.1:5000/ok', 'https://evil.example/cb'], ['custom-scheme:/cb']]) {
      const bad = uris[uris.length - 1] as string;
      const r = await registerClient(origin, { redirect_uris: uris, token_endpoint_auth_method: 'none', grant_types: ['authorization_code'] });
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.equal(r.json.error, 'invalid_redirect_uri');
      assert.ok(String(r.json.error_description).includes(bad), r.json.error_description);
      assert.match(r.json.error_description, /loopback/);
    }
  });

  it('answers an authorization request it cannot redirect with a plain error page', async function () {
    const { challenge } = pkcePair();
    const res = await fetch(
      authorizationUrl(origin, { clientId: 'no-such-client', redirectUri: 'http://127.0.0.1:1/cb', scope: 'borrower:token', state: 'x', challenge, method: 'S256' }),
      { redirect: 'manual' },
    );
    assert.equal(res.status, 400);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const html = await res.text();
    assert.match(html, /invalid_client/);
    assert.ok(!/at .*\.js:\d+/.test(html), 'no stack trace');
  });

  describe('authorization requests', function () {
    let clientId: string;
    const redirectUri = 'http://127.0.0.1:43999/callback';

    before(async function () {
      clientId = await registerLoopbackClient(origin, redirectUri);
    });

    it('refuses a request without PKCE', async function () {
      const e = await authorizationError(authorizationUrl(origin, { clientId, redirectUri, scope: 'borrower:token', state: 's1' }));
      assert.equal(e.get('error'), 'invalid_request');
      assert.match(e.get('error_description') ?? '', /PKCE/);
      assert.equal(e.get('state'), 's1');
    });

    it('refuses code_challenge_method=plain', async function () {
      const { verifier } = pkcePair();
      const e = await authorizationError(authorizationUrl(origin, { clientId, redirectUri, scope: 'borrower:token', state: 's2', challenge: verifier, method: 'plain' }));
      assert.equal(e.get('error'), 'invalid_request');
      assert.match(e.get('error_description') ?? '', /code_challenge_method/);
    });

    it('refuses an unknown resource', async function () {
      const { challenge } = pkcePair();
      const e = await authorizationError(
        authorizationUrl(origin, { clientId, redirectUri, scope: 'borrower:token', state: 's3', challenge, method: 'S256', resource: 'https://other.example/api' }),
      );
      assert.equal(e.get('error'), 'invalid_target');
    });

    it('refuses the implicit flow', async function () {
      const { challenge } = pkcePair();
      const e = await authorizationError(
        authorizationUrl(origin, { clientId, redirectUri, scope: 'borrower:token', state: 's4', challenge, method: 'S256', responseType: 'token' }),
      );
      assert.equal(e.get('error'), 'unsupported_response_type');
    });

    it('sends a valid request to the sign-in page, which shows the client and scopes', async function () {
      const { challenge } = pkcePair();
      const res = await fetch(authorizationUrl(origin, { clientId, redirectUri, scope: 'borrower:token handle:claim', state: 's5', challenge, method: 'S256' }), {
        redirect: 'manual',
      });
      assert.equal(res.status, 303);
      const location = new URL(res.headers.get('location') as string, origin);
      assert.match(location.pathname, /^\/oauth\/interaction\/[A-Za-z0-9_-]+$/);
      const cookies = res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const page = await fetch(location, { headers: { cookie: cookies } });
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'nonce-/);
      const html = await page.text();
      assert.ok(html.includes('Test agent host'));
      assert.ok(html.includes('borrower:token') && html.includes('handle:claim'));
      assert.ok(!/seed phrase[^.]*<input|private key[^.]*<input/i.test(html));
      assert.ok(!html.includes('<input'), 'the sign-in page has no input fields');

      const without = await fetch(location);
      assert.equal(without.status, 400, 'the page needs the interaction cookie of the browser that started the flow');
    });
  });
});
