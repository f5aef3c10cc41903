import assert from 'node:assert/strict';
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { generatePrivateKey } from 'viem/accounts';
import { completeSignIn, openBrowser, startRedirectCatcher, type BrowserHandle, type RedirectCatcher } from '../support/browser.js';
import { authorizationUrl, pkcePair, registerLoopbackClient, tokenRequest } from '../support/oauth-client.js';
import { world, type World } from '../helpers/world.js';

describe('borrower sign-in in headless Chromium: authorization code + PKCE, stage-gated scopes, rotating refresh tokens', function () {
  this.timeout(120_000);
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
    clientId = await registerLoopbackClient(origin, catcher.redirectUri, 'Chromium test host');
    browser = await openBrowser();
  });

  after(async function () {
    await browser?.close();
    await catcher?.close();
  });

  const REQUESTED = 'borrower:token credit:facility:accept agent:key:register';

  async function verifyAccessToken(token: string) {
    const jwks = createRemoteJWKSet(new URL(`${origin}/oauth/jwks`));
    return (await jwtVerify(token, jwks, { issuer: `${origin}/oauth`, audience: mcp, algorithms: ['ES256'], typ: 'at+jwt' })).payload;
  }

  it('signs in with the wallet, issues a 15-minute JWT for {mcp_url} carrying only the stage scopes, and rotates refresh tokens', async function () {
    const { page, wallet } = await browser!.newWalletPage(generatePrivateKey());
    const { verifier, challenge } = pkcePair();
    const state = 'state-' + Date.now();
    const landed = await completeSignIn(
      page,
      authorizationUrl(origin, { clientId, redirectUri: catcher!.redirectUri, scope: REQUESTED, state, challenge, method: 'S256', resource: mcp }),
      catcher!.redirectUri,
    );
    assert.equal(landed.searchParams.get('state'), state);
    assert.equal(landed.searchParams.get('iss'), `${origin}/oauth`);
    const code = landed.searchParams.get('code');
    assert.ok(code, `no code in ${landed.href}`);
    assert.ok(wallet.requests.includes('eth_signTypedData_v4'));

    const walletDoc = await w.store.c.wallets.findOne({ _id: wallet.address.toLowerCase() });
    assert.ok(walletDoc, 'sign-in registers the wallet');
    const borrowerId = walletDoc.borrowerId;
    const borrower = await w.store.c.borrowers.findOne({ _id: borrowerId });
    assert.equal(borrower?.stage, 'SIGNED_IN');
    assert.equal(borrower?.walletAddress, wallet.address.toLowerCase());

    const wrongVerifier = await tokenRequest(origin, { grant_type: 'authorization_code', code, redirect_uri: catcher!.redirectUri, client_id: clientId, code_verifier: pkcePair().verifier });
    assert.equal(wrongVerifier.status, 400);
    assert.equal(wrongVerifier.json.error, 'invalid_grant');

    // A failed verifier check does not consume the code (oidc-provider checks PKCE before consuming).
    const t1 = await tokenRequest(origin, { grant_type: 'authorization_code', code, redirect_uri: catcher!.redirectUri, client_id: clientId, code_verifier: verifier, resource: mcp });
    assert.equal(t1.status, 200, JSON.stringify(t1.json));
    assert.equal(t1.json.token_type, 'Bearer');
    assert.equal(t1.json.expires_in, 900);
    assert.equal(t1.json.scope, 'borrower:token');
    assert.equal(typeof t1.json.refresh_token, 'string');
    assert.equal(t1.json.id_token, undefined, 'a plain OAuth request gets no ID token');

    assert.equal(decodeProtectedHeader(t1.json.access_token).alg, 'ES256');
    const claims = await verifyAccessToken(t1.json.access_token);
    assert.equal(claims.sub, borrowerId);
    assert.equal(claims.aud, mcp);
    assert.equal(claims.client_id, clientId);
    assert.equal(claims.scope, 'borrower:token');
    assert.equal((claims.exp as number) - (claims.iat as number), 900);

    const t2 = await tokenRequest(origin, { grant_type: 'refresh_token', refresh_token: t1.json.refresh_token, client_id: clientId });
    assert.equal(t2.status, 200, JSON.stringify(t2.json));
    assert.notEqual(t2.json.refresh_token, t1.json.refresh_token, 'refresh tokens rotate');
    assert.equal(t2.json.scope, 'borrower:token');

    // The onboarding workflow (another component) advances the stage and mirrors it into the
    // borrower doc; here we write the mirror directly to see the next refresh pick it up.
    await w.store.c.borrowers.updateOne({ _id: borrowerId }, { $set: { stage: 'ACTIVE' } });
    const t3 = await tokenRequest(origin, { grant_type: 'refresh_token', refresh_token: t2.json.refresh_token, client_id: clientId });
    assert.equal(t3.status, 200, JSON.stringify(t3.json));
    assert.equal(t3.json.scope, REQUESTED, 'ACTIVE unlocks everything, but a token only carries what the agent requested');
    const refreshed = await verifyAccessToken(t3.json.access_token);
    assert.equal(refreshed.scope, REQUESTED);
    assert.equal(refreshed.sub, borrowerId);
    assert.equal((refreshed.exp as number) - (refreshed.iat as number), 900);

    const reused = await tokenRequest(origin, { grant_type: 'refresh_token', refresh_token: t1.json.refresh_token, client_id: clientId });
    assert.equal(reused.status, 400);
    assert.equal(reused.json.error, 'invalid_grant');
    // Reuse of a rotated refresh token revokes the whole grant, the newest refresh token included.
    const afterReuse = await tokenRequest(origin, { grant_type: 'refresh_token', refresh_token: t3.json.refresh_token, client_id: clientId });
    assert.equal(afterReuse.status, 400);
    assert.equal(afterReuse.json.error, 'invalid_grant');

    const replayed = await tokenRequest(origin, { grant_type: 'authorization_code', code, redirect_uri: catcher!.redirectUri, client_id: clientId, code_verifier: verifier });
    assert.equal(replayed.status, 400);
    assert.equal(replayed.json.error, 'invalid_grant');
  });

  it('signs the same wallet in again as the same borrower', async function () {
    const key = generatePrivateKey();
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const { page, wallet, context } = await browser!.newWalletPage(key);
      const { verifier, challenge } = pkcePair();
      const landed = await completeSignIn(
        page,
        authorizationUrl(origin, { clientId, redirectUri: catcher!.redirectUri, scope: 'borrower:token', state: `again-${i}`, challenge, method: 'S256' }),
        catcher!.redirectUri,
      );
      const t = await tokenRequest(origin, {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code') as string,
        redirect_uri: catcher!.redirectUri,
        client_id: clientId,
        code_verifier: verifier,
      });
      assert.equal(t.status, 200, JSON.stringify(t.json));
      const claims = await verifyAccessToken(t.json.access_token);
      ids.push(String(claims.sub));
      assert.equal((await w.store.c.wallets.findOne({ _id: wallet.address.toLowerCase() }))?.borrowerId, claims.sub);
      await context.close();
    }
    assert.equal(ids[0], ids[1]);
  });

  it('refuses a signature that is not the connected wallet\'s WalletProof, and cancelling returns access_denied', async function () {
    const { page } = await browser!.newWalletPage(generatePrivateKey());
    const { challenge } = pkcePair();
    await page.goto(authorizationUrl(origin, { clientId, redirectUri: catcher!.redirectUri, scope: 'borrower:token', state: 'cancel-me', challenge, method: 'S256' }));
    await page.waitForURL((u) => u.pathname.startsWith('/oauth/interaction/'));
    assert.equal(await page.textContent('#client-name'), 'Chromium test host');

    // The real wallet signs the real challenge, but the proof claims another wallet.
    const forged = (await page.evaluate(`(async () => {
      const base = location.pathname;
      const wallet = (await window.ethereum.request({ method: 'eth_requestAccounts' }))[0];
      const ch = await (await fetch(base + '/challenge?wallet=' + wallet)).json();
      const res = await fetch(base + '/wallet-proof', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ wallet: '${'0x' + '22'.repeat(20)}', signature: await window.ethereum.request({ method: 'eth_signTypedData_v4', params: [wallet, JSON.stringify(ch.typed_data)] }), issuedAt: ch.issued_at }) });
      return { status: res.status, body: await res.json() };
    })()`)) as { status: number; body: { error: { code: string; message: string } } };
    assert.equal(forged.status, 400);
    assert.equal(forged.body.error.code, 'INVALID_REQUEST');
    assert.match(forged.body.error.message, /signature/i);

    await page.click('#cancel');
    await page.waitForURL((u) => u.href.startsWith(catcher!.redirectUri));
    const landed = new URL(page.url());
    assert.equal(landed.searchParams.get('error'), 'access_denied');
    assert.equal(landed.searchParams.get('state'), 'cancel-me');
  });

  it('works with the MCP SDK client: discovery, registration, authorization, code exchange and refresh', async function () {
    const issuer = `${origin}/oauth`;
    const metadata = await discoverAuthorizationServerMetadata(issuer);
    assert.ok(metadata, 'the SDK finds the metadata');
    assert.equal(metadata.issuer, issuer);
    const clientInformation = await registerClient(issuer, {
      metadata,
      clientMetadata: {
        client_name: 'MCP SDK host',
        redirect_uris: [catcher!.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: REQUESTED,
      },
    });
    const { authorizationUrl: url, codeVerifier } = await startAuthorization(issuer, {
      metadata,
      clientInformation,
      redirectUrl: catcher!.redirectUri,
      scope: REQUESTED,
      state: 'sdk-state',
      resource: new URL(mcp),
    });
    const { page } = await browser!.newWalletPage(generatePrivateKey());
    const landed = await completeSignIn(page, url.href, catcher!.redirectUri);
    const tokens = await exchangeAuthorization(issuer, {
      metadata,
      clientInformation,
      authorizationCode: landed.searchParams.get('code') as string,
      codeVerifier,
      redirectUri: catcher!.redirectUri,
      resource: new URL(mcp),
    });
    assert.equal(tokens.scope, 'borrower:token');
    assert.equal((await verifyAccessToken(tokens.access_token)).aud, mcp);
    const refreshed = await refreshAuthorization(issuer, { metadata, clientInformation, refreshToken: tokens.refresh_token as string, resource: new URL(mcp) });
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    assert.equal((await verifyAccessToken(refreshed.access_token)).scope, 'borrower:token');
  });
});
