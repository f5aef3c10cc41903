import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { borrowerReinstate, borrowerSuspend } from '../../tools/cli/borrower-commands.js';
import { borrowerPageSession } from '../helpers/borrower-page-session.js';
import { world, type World } from '../helpers/world.js';
import { completeSignIn, openBrowser, startRedirectCatcher, type BrowserHandle, type RedirectCatcher } from '../support/browser.js';
import { readJsonResponse } from '../support/http.js';
import { authorizationUrl, pkcePair, registerLoopbackClient, tokenRequest } from '../support/oauth-client.js';

interface Tokens {
  access_token: string;
  refresh_token: string;
}

/**
 * The borrower's kill switch ends an agent's OAuth access, not only its payments: revoking the agent
 * on the borrower page, disconnecting its app from the page's list, or the operator's suspension
 * end the grant at once. Its access tokens are refused on their next /mcp call (401 invalid_token,
 * not at their expiry), its refresh token is invalid_grant, register_borrower gets no new agent
 * with them, and new tokens need the borrower's wallet again (the same browser is not let through).
 */
describe("borrower kill switch: revoking an agent or disconnecting its app ends the agent's OAuth access", function () {
  this.timeout(300_000);
  let w: World;
  let origin: string;
  let mcp: string;
  let browser: BrowserHandle | undefined;
  let catcher: RedirectCatcher | undefined;
  let clientId: string;
  const CLIENT_NAME = 'Kill switch test host';

  before(async function () {
    w = await world();
    origin = new URL(w.baseUrl).origin;
    mcp = `${origin}/mcp`;
    catcher = await startRedirectCatcher();
    clientId = await registerLoopbackClient(origin, catcher.redirectUri, CLIENT_NAME);
    browser = await openBrowser();
  });

  after(async function () {
    await browser?.close();
    await catcher?.close();
  });

  const authUrl = (challenge: string) =>
    authorizationUrl(origin, { clientId, redirectUri: catcher!.redirectUri, scope: 'borrower:token offline_access', state: `s-${randomUUID()}`, challenge, method: 'S256', resource: mcp });

  async function exchange(landed: URL, verifier: string): Promise<Tokens> {
    const code = landed.searchParams.get('code');
    assert.ok(code, landed.href);
    const tokens = await tokenRequest(origin, { grant_type: 'authorization_code', code, redirect_uri: catcher!.redirectUri, client_id: clientId, code_verifier: verifier, resource: mcp });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.json));
    return tokens.json as Tokens;
  }

  /** The borrower's wallet signs the agent in (OAuth in Chromium); the page stays open in that browser context. */
  async function connectAgent(): Promise<{ page: Page; wallet: PrivateKeyAccount; tokens: Tokens }> {
    const key = generatePrivateKey();
    const { page } = await browser!.newWalletPage(key, { chainId: w.cli.env.CHAIN_ID });
    const { verifier, challenge } = pkcePair();
    const tokens = await exchange(await completeSignIn(page, authUrl(challenge), catcher!.redirectUri), verifier);
    return { page, wallet: privateKeyToAccount(key), tokens };
  }

  const refresh = (refreshToken: string) => tokenRequest(origin, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

  async function callTool(token: string, name: string, args: Record<string, unknown>) {
    const res = await fetch(mcp, {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    const text = await res.text();
    return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '', json: text ? JSON.parse(text) : null };
  }

  async function registerAgent(token: string, label: string): Promise<string> {
    const r = await callTool(token, 'register_borrower', { idempotency_key: randomUUID(), terminal_label: label });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const id = r.json.result?.structuredContent?.operational_agent_id;
    assert.ok(typeof id === 'string', JSON.stringify(r.json));
    return id;
  }

  async function assertTokenRefused(token: string, what: string) {
    const r = await callTool(token, 'get_borrower_status', {});
    assert.equal(r.status, 401, `${what}: ${JSON.stringify(r.json)}`);
    assert.match(r.challenge, /^Bearer /, what);
    assert.ok(r.challenge.includes('error="invalid_token"'), `${what}: ${r.challenge}`);
  }

  /** (a) access tokens refused, (b) the refresh token refused, (c) register_borrower creates nothing. */
  async function assertAccessEnded(borrowerId: string, accessTokens: string[], refreshToken: string) {
    for (const [i, t] of accessTokens.entries()) await assertTokenRefused(t, `access token ${i + 1} after the kill switch`);
    const refreshed = await refresh(refreshToken);
    assert.equal(refreshed.status, 400, JSON.stringify(refreshed.json));
    assert.equal(refreshed.json.error, 'invalid_grant');
    const agentsBefore = await w.store.c.operationalAgents.countDocuments({ borrowerId });
    const reg = await callTool(accessTokens[accessTokens.length - 1] as string, 'register_borrower', { idempotency_key: randomUUID(), terminal_label: 'after the kill switch' });
    assert.equal(reg.status, 401, JSON.stringify(reg.json));
    assert.ok(reg.challenge.includes('error="invalid_token"'), reg.challenge);
    assert.equal(await w.store.c.operationalAgents.countDocuments({ borrowerId }), agentsBefore, 'no new operational agent');
  }

  /** Signs in to /borrower/account in the page's browser context (the same one the agent's OAuth sign-in used). */
  async function openAccountPage(page: Page): Promise<void> {
    await page.goto(`${origin}/borrower/account`);
    await page.click('#connect');
    await page.waitForSelector('#signed-in:not([hidden])', { timeout: 30_000 });
  }

  /** A new authorization of the same client in the same browser: the wallet must sign again, then it works. */
  async function assertNewConsentNeeded(page: Page, borrowerId: string) {
    const { verifier, challenge } = pkcePair();
    await page.goto(authUrl(challenge));
    await page.waitForURL((u) => u.pathname.startsWith('/oauth/interaction/') || u.href.startsWith(catcher!.redirectUri), { timeout: 30_000 });
    assert.ok(new URL(page.url()).pathname.startsWith('/oauth/interaction/'), `the browser was let through without the wallet: ${page.url()}`);
    const fresh = await exchange(await completeSignIn(page, authUrl(challenge), catcher!.redirectUri), verifier);
    const agentId = await registerAgent(fresh.access_token, 'after a new consent');
    assert.equal((await w.store.c.operationalAgents.findOne({ _id: agentId }))?.borrowerId, borrowerId);
  }

  async function borrowerIdOf(token: string): Promise<string> {
    const r = await callTool(token, 'get_borrower_status', {});
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return r.json.result.structuredContent.borrower_id as string;
  }

  it('"Revoke this agent" on the page: its access tokens are refused at the next call, its refresh token is invalid_grant, register_borrower is refused; a new wallet consent lets the app in again', async function () {
    const { page, tokens: t1 } = await connectAgent();
    const borrowerId = await borrowerIdOf(t1.access_token);
    const agentId = await registerAgent(t1.access_token, 'kill switch laptop');
    const r2 = await refresh(t1.refresh_token);
    assert.equal(r2.status, 200, JSON.stringify(r2.json));
    const t2 = r2.json as Tokens;
    // The same browser re-authorizes silently while the grant stands (no wallet asked).
    const { verifier, challenge } = pkcePair();
    await page.goto(authUrl(challenge));
    await page.waitForURL((u) => u.href.startsWith(catcher!.redirectUri), { timeout: 30_000 });
    const t3 = await exchange(new URL(page.url()), verifier);
    assert.equal((await callTool(t3.access_token, 'get_borrower_status', {})).status, 200);

    await openAccountPage(page);
    const agent = `div.agent[data-agent-id="${agentId}"]`;
    await page.waitForSelector(agent);
    page.once('dialog', (d) => void d.accept());
    await page.click(`${agent} button.revoke-agent`);
    await page.locator(`${agent} h3`, { hasText: '(revoked)' }).waitFor({ timeout: 30_000 });

    await assertAccessEnded(borrowerId, [t1.access_token, t2.access_token, t3.access_token], t2.refresh_token);
    const r3 = await refresh(t3.refresh_token);
    assert.equal(r3.json.error, 'invalid_grant', 'the silently re-authorized refresh token is ended too');
    assert.equal(await page.textContent('#clients'), 'None.', 'the app is no longer listed as connected');
    await assertNewConsentNeeded(page, borrowerId);
  });

  it('the page lists the connected app (name, id, scopes, when) and "Disconnect" ends its access the same way; its agent is not revoked', async function () {
    const { page, tokens: t1 } = await connectAgent();
    const borrowerId = await borrowerIdOf(t1.access_token);
    const agentId = await registerAgent(t1.access_token, 'disconnect laptop');
    const r2 = await refresh(t1.refresh_token);
    assert.equal(r2.status, 200, JSON.stringify(r2.json));
    const t2 = r2.json as Tokens;

    await openAccountPage(page);
    const row = `li.client[data-client-id="${clientId}"]`;
    await page.waitForSelector(row);
    const text = (await page.textContent(row)) ?? '';
    assert.match(text, new RegExp(CLIENT_NAME));
    assert.match(text, new RegExp(clientId));
    assert.match(text, /borrower:token/);
    const view = (await page.evaluate(async () => (await fetch('/borrower/api/account')).json())) as {
      connected_clients: Record<string, unknown>[];
      operational_agents: { operational_agent_id: string; client_id: string }[];
    };
    assert.equal(view.operational_agents.find((a) => a.operational_agent_id === agentId)?.client_id, clientId, 'the agent names the app it signed in through');
    assert.match((await page.textContent(`div.agent[data-agent-id="${agentId}"]`)) ?? '', new RegExp(`Signed in through ${clientId}`));
    assert.equal(view.connected_clients.length, 1, JSON.stringify(view.connected_clients));
    const listed = view.connected_clients[0] as { client_id: string; client_name: string; scopes: string[]; granted_at: string; last_used_at: string; grants: number };
    assert.equal(listed.client_id, clientId);
    assert.equal(listed.client_name, CLIENT_NAME);
    assert.ok(listed.scopes.includes('borrower:token'), JSON.stringify(listed));
    assert.ok(Date.parse(listed.granted_at) <= Date.now() && Date.parse(listed.last_used_at) >= Date.parse(listed.granted_at), JSON.stringify(listed));
    assert.equal(listed.grants, 1);

    page.once('dialog', (d) => void d.accept());
    await page.click(`${row} button.disconnect-client`);
    // The sign-in left "Signed in." showing as an ok status: wait for the disconnect's own answer (or an error).
    await page.waitForSelector('#status.ok:has-text("App disconnected."), #status.error', { timeout: 30_000 });
    assert.equal(await page.textContent('#status'), 'App disconnected.');
    await page.locator('#clients li', { hasText: /^None\.$/ }).waitFor({ timeout: 30_000 });

    await assertAccessEnded(borrowerId, [t1.access_token, t2.access_token], t2.refresh_token);
    assert.equal((await w.store.c.operationalAgents.findOne({ _id: agentId }))?.revokedAt, undefined, 'disconnecting leaves the agent itself alone');
    const again = await page.evaluate(async (id) => {
      const res = await fetch('/borrower/api/connected-clients/disconnect', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: id }) });
      return { status: res.status, body: (await res.json()) as { error: { code: string } } };
    }, clientId);
    assert.equal(again.status, 404, JSON.stringify(again.body));
    assert.equal(again.body.error.code, 'NOT_FOUND');
    await assertNewConsentNeeded(page, borrowerId);
  });

  it("another borrower cannot disconnect this borrower's app (404, the token keeps working); a malformed request is 400", async function () {
    const [victim, other] = await Promise.all([connectAgent(), connectAgent()]);
    const session = await borrowerPageSession(origin, other.wallet);
    const post = async (body: string, headers: Record<string, string> = {}) =>
      readJsonResponse(
        await fetch(`${origin}/borrower/api/connected-clients/disconnect`, { method: 'POST', headers: { 'content-type': 'application/json', origin, cookie: `borrower_session=${session}`, ...headers }, body }),
      );
    const unknown = await post(JSON.stringify({ client_id: 'some-other-client' }));
    assert.equal(unknown.status, 404, JSON.stringify(unknown.json));
    assert.equal(unknown.json.error.code, 'NOT_FOUND');
    for (const bad of ['{}', JSON.stringify({ client_id: '' }), JSON.stringify({ client_id: clientId, extra: 1 }), JSON.stringify({ client_id: 'x'.repeat(2049) }), '[]']) {
      const r = await post(bad);
      assert.equal(r.status, 400, `${bad.slice(0, 40)}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.code, 'INVALID_REQUEST');
    }
    const foreign = await post(JSON.stringify({ client_id: clientId }), { origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    // The other borrower disconnects the same app from their own account only.
    const own = await post(JSON.stringify({ client_id: clientId }));
    assert.equal(own.status, 200, JSON.stringify(own.json));
    assert.deepEqual(own.json, { client_id: clientId, status: 'disconnected', ended_grants: 1 });
    await assertTokenRefused(other.tokens.access_token, "the other borrower's own token");
    assert.equal((await callTool(victim.tokens.access_token, 'get_borrower_status', {})).status, 200, "the victim's token still works");
    assert.equal((await refresh(victim.tokens.refresh_token)).status, 200, "the victim's refresh token still works");
  });

  it("the operator's suspension ends every grant of the borrower at once; after reinstating, the wallet signs the app in again", async function () {
    const { page, tokens } = await connectAgent();
    const borrowerId = await borrowerIdOf(tokens.access_token);
    await registerAgent(tokens.access_token, 'suspended laptop');
    const out = await borrowerSuspend(w.cli, { borrower: borrowerId, reason: 'kill switch test' });
    await assertAccessEnded(borrowerId, [tokens.access_token], tokens.refresh_token);
    assert.deepEqual(out, { borrowerId, suspended: true, changed: true, endedGrants: 1 });
    await borrowerReinstate(w.cli, { borrower: borrowerId });
    await assertNewConsentNeeded(page, borrowerId);
  });
});
