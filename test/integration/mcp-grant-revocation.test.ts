import assert from 'node:assert/strict';
import { generatePrivateKey } from 'viem/accounts';
import { completeSignIn, openBrowser, startRedirectCatcher, type BrowserHandle, type RedirectCatcher } from '../support/browser.js';
import { authorizationUrl, pkcePair, registerLoopbackClient, tokenRequest } from '../support/oauth-client.js';
import { world, type World } from '../helpers/world.js';

/**
 * An access token dies with its grant: once oidc-provider revokes the grant (authorization-code
 * replay, refresh-token reuse, revocation of the refresh token), the very next /mcp call is
 * 401 invalid_token, not 15 minutes later.
 */
describe('mcp: access tokens of a revoked grant are refused at once', function () {
  this.timeout(180_000);
  let w: World;
  let origin: string;
  let mcp: string;
  let browser: BrowserHandle | undefined;
  let catcher: RedirectCatcher | undefined;
  let clientId: string;

  before(async function () {
    w = await world();
    origin = new URL(w.baseUrl).origin;
    mcp = `${origin}/mcp`;
    catcher = await startRedirectCatcher();
    clientId = await registerLoopbackClient(origin, catcher.redirectUri, 'Revocation test host');
    browser = await openBrowser();
  });

  after(async function () {
    await browser?.close();
    await catcher?.close();
  });

  /** A fresh sign-in: the code, its verifier and the first token response. */
  async function signIn() {
    const { page } = await browser!.newWalletPage(generatePrivateKey());
    const { verifier, challenge } = pkcePair();
    const landed = await completeSignIn(
      page,
      authorizationUrl(origin, { clientId, redirectUri: catcher!.redirectUri, scope: 'borrower:token', state: `s-${Date.now()}`, challenge, method: 'S256', resource: mcp }),
      catcher!.redirectUri,
    );
    await page.close();
    const code = landed.searchParams.get('code') as string;
    assert.ok(code, landed.href);
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: catcher!.redirectUri, client_id: clientId, code_verifier: verifier, resource: mcp };
    const tokens = await tokenRequest(origin, exchange);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.json));
    return { exchange, tokens: tokens.json as { access_token: string; refresh_token: string } };
  }

  async function mcpStatus(token: string): Promise<{ status: number; challenge: string }> {
    const res = await fetch(mcp, {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await res.text();
    return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '' };
  }

  async function assertRefused(token: string, what: string) {
    const r = await mcpStatus(token);
    assert.equal(r.status, 401, what);
    assert.ok(r.challenge.includes('error="invalid_token"'), `${what}: ${r.challenge}`);
  }

  it('replaying the authorization code revokes the grant: the token it issued is refused at once', async function () {
    const { exchange, tokens } = await signIn();
    assert.equal((await mcpStatus(tokens.access_token)).status, 200, 'the fresh token works');
    const replayed = await tokenRequest(origin, exchange);
    assert.equal(replayed.json.error, 'invalid_grant');
    await assertRefused(tokens.access_token, 'after code replay');
  });

  it('reusing a rotated refresh token revokes the grant: every access token of it is refused at once', async function () {
    const { tokens: t1 } = await signIn();
    const t2 = await tokenRequest(origin, { grant_type: 'refresh_token', refresh_token: t1.refresh_token, client_id: clientId });
    assert.equal(t2.status, 200, JSON.stringify(t2.json));
    assert.equal((await mcpStatus(t2.json.access_token)).status, 200, 'the refreshed token works');
    const reused = await tokenRequest(origin, { grant_type: 'refresh_token', refresh_token: t1.refresh_token, client_id: clientId });
    assert.equal(reused.json.error, 'invalid_grant');
    await assertRefused(t1.access_token, 'first token after refresh-token reuse');
    await assertRefused(t2.json.access_token, 'refreshed token after refresh-token reuse');
  });

  it('revoking the refresh token at the revocation endpoint revokes the grant and its access tokens', async function () {
    const { tokens } = await signIn();
    assert.equal((await mcpStatus(tokens.access_token)).status, 200);
    const revoked = await fetch(`${origin}/oauth/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, token_type_hint: 'refresh_token', client_id: clientId }).toString(),
    });
    assert.equal(revoked.status, 200, await revoked.text());
    await assertRefused(tokens.access_token, 'after revocation');
  });

  it('a token from another sign-in of the same client is untouched by the revocation', async function () {
    const { tokens: kept } = await signIn();
    const { exchange } = await signIn();
    await tokenRequest(origin, exchange);
    assert.equal((await mcpStatus(kept.access_token)).status, 200, 'another grant still stands');
  });
});
