import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { openBrowser, type BrowserHandle } from '../support/browser.js';
import { readJsonResponse } from '../support/http.js';
import { capture, newBorrower, newMerchant, newVoucher, UNTHROTTLED, world, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';

/** The borrower's own page, driven in headless Chromium with the borrower's wallet in the page. */
describe('borrower page: wallet sign-in, agents and keys, revoke and lower limits', function () {
  this.timeout(240_000);
  let w: World;
  let m: TestMerchant;
  let origin: string;
  let browser: BrowserHandle | undefined;

  before(async function () {
    w = await world();
    origin = new URL(w.baseUrl).origin;
    m = await newMerchant(w, 'Borrower page merchant', { rateLimits: UNTHROTTLED });
    browser = await openBrowser();
  });

  after(async function () {
    await browser?.close();
  });

  /** Opens the page with the borrower's wallet and signs in; returns once the account shows. */
  async function signIn(b: TestBorrower): Promise<{ page: Page; context: BrowserContext }> {
    const { page, context, wallet } = await browser!.newWalletPage(b.walletPrivateKey, { chainId: w.cli.env.CHAIN_ID });
    await page.goto(`${origin}/borrower/account`);
    await page.click('#connect');
    await page.waitForSelector('#signed-in:not([hidden])', { timeout: 30_000 });
    assert.ok(wallet.requests.includes('eth_signTypedData_v4'), 'the wallet signed the WalletProof');
    return { page, context };
  }

  /** prepare_x402_payment's refusal (a ToolError) with this reason. */
  const refusedWith = (reason: string) => (err: unknown) => {
    assert.equal((err as { details?: { reason?: string } }).details?.reason, reason, String(err));
    return true;
  };

  const keyRow = (keyId: string) => `li.key[data-key-id="${keyId}"]`;

  /** The page's own fetch (same origin, its session cookie), as its script would call. */
  function pagePost(page: Page, path: string, body: unknown): Promise<{ status: number; body: any }> {
    return page.evaluate(
      async ([p, b]) => {
        const res = await fetch(p as string, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
        return { status: res.status, body: await res.json() };
      },
      [path, body] as const,
    );
  }

  async function keyStatus(keyId: string) {
    return (await w.store.c.agentKeys.findOne({ _id: keyId }))?.status;
  }

  it('signs in, shows the agent, key, limits, spend and payments; lowers a limit with a signed grant; revokes the key, and a voucher it signed before is refused at capture', async function () {
    const b = await newBorrower(w);
    const paid = await newVoucher(w, m, b, '2500');
    assert.equal((await capture(w, m, paid.captureBody, paid.idempotencyKey)).status, 200);
    const preparedBefore = await newVoucher(w, m, b, '1700');

    const { page, context } = await signIn(b);
    const cookie = (await context.cookies()).find((c) => c.name === 'borrower_session');
    assert.ok(cookie, 'a session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.path, '/borrower');

    const row = keyRow(b.agentKeyId);
    await page.waitForSelector(row);
    assert.equal(await page.textContent(`${row} .key-status`), 'active');
    const rowText = (await page.textContent(row)) ?? '';
    assert.match(rowText, /1000000000/, 'the per-payment limit');
    assert.match(rowText, /Spent today4200/, "today's spend: the captured payment and the open hold");
    assert.match((await page.textContent('#agents')) ?? '', /test terminal/);
    assert.match((await page.textContent('#payments')) ?? '', /2500 to Borrower page merchant/);
    assert.match((await page.textContent('#holds')) ?? '', /1700 to Borrower page merchant/);
    const csp = (await page.goto(`${origin}/borrower/account`))?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-/);
    await page.waitForSelector(row, { timeout: 30_000 });

    // Lower the limits: the wallet signs a new AgentGrant for the same key.
    await page.fill(`${row} input.per-limit`, '2000');
    await page.fill(`${row} input.daily-limit`, '900000');
    await page.click(`${row} button.lower-limits`);
    await page.waitForSelector('#status.ok', { timeout: 30_000 });
    assert.equal(await page.textContent('#status'), 'Limits lowered.');
    const lowered = await w.store.c.agentKeys.findOne({ _id: b.agentKeyId });
    assert.equal(lowered?.grant?.perPaymentLimit, '2000');
    assert.equal(lowered?.grant?.dailyLimit, '900000');
    await assert.rejects(newVoucher(w, m, b, '2001'), refusedWith('over_per_payment_limit'));
    const raise = await pagePost(page, `/borrower/api/agent-keys/${b.agentKeyId}/limits/typed-data`, { per_payment_limit: '3000', daily_limit: '900000' });
    assert.equal(raise.status, 400, 'the page only lowers');
    assert.equal(raise.body.error.code, 'INVALID_REQUEST');

    // The kill switch.
    page.once('dialog', (d) => void d.accept());
    await page.click(`${row} button.revoke-key`);
    await page.locator(`${row} .key-status`, { hasText: /^revoked$/ }).waitFor({ timeout: 30_000 });
    assert.equal(await keyStatus(b.agentKeyId), 'revoked');

    const refused = await capture(w, m, preparedBefore.captureBody, preparedBefore.idempotencyKey);
    assert.equal(refused.status, 422, JSON.stringify(refused.json));
    assert.equal(refused.json.error.invalidReason, 'agent_key_revoked');
    await assert.rejects(newVoucher(w, m, b, '100'), refusedWith('no_active_agent_key'));
  });

  it('revokes a whole operational agent: its keys are revoked, it cannot prepare, and its earlier vouchers are refused', async function () {
    const b = await newBorrower(w);
    const preparedBefore = await newVoucher(w, m, b, '900');
    const { page } = await signIn(b);
    const agent = `div.agent[data-agent-id="${b.operationalAgentId}"]`;
    await page.waitForSelector(agent);
    page.once('dialog', (d) => void d.accept());
    await page.click(`${agent} button.revoke-agent`);
    await page.locator(`${agent} h3`, { hasText: '(revoked)' }).waitFor({ timeout: 30_000 });
    assert.ok((await w.store.c.operationalAgents.findOne({ _id: b.operationalAgentId }))?.revokedAt);
    assert.equal(await keyStatus(b.agentKeyId), 'revoked');
    const refused = await capture(w, m, preparedBefore.captureBody, preparedBefore.idempotencyKey);
    assert.equal(refused.json.error?.invalidReason, 'agent_key_revoked', JSON.stringify(refused.json));
    await assert.rejects(newVoucher(w, m, b, '100'), refusedWith('operational_agent_revoked'));
  });

  it("another borrower's session cannot see or act on this borrower's agent or key (404, nothing changes)", async function () {
    const [victim, other] = await Promise.all([newBorrower(w), newBorrower(w)]);
    const { page } = await signIn(other);
    for (const [path, body] of [
      [`/borrower/api/agent-keys/${victim.agentKeyId}/revoke`, {}],
      [`/borrower/api/operational-agents/${victim.operationalAgentId}/revoke`, {}],
      [`/borrower/api/agent-keys/${victim.agentKeyId}/limits/typed-data`, { per_payment_limit: '1', daily_limit: '1' }],
      [`/borrower/api/agent-keys/${victim.agentKeyId}/limits`, { per_payment_limit: '1', daily_limit: '1', nonce: `0x${'ab'.repeat(32)}`, signature: `0x${'cd'.repeat(65)}` }],
    ] as const) {
      const r = await pagePost(page, path, body);
      assert.equal(r.status, 404, `${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'NOT_FOUND');
    }
    const own = (await page.evaluate(async () => (await fetch('/borrower/api/account')).json())) as { borrower_id: string };
    assert.equal(own.borrower_id, other.borrowerId);
    assert.ok(!JSON.stringify(own).includes(victim.agentKeyId));
    assert.equal(await keyStatus(victim.agentKeyId), 'active');
    assert.equal((await w.store.c.operationalAgents.findOne({ _id: victim.operationalAgentId }))?.revokedAt, undefined);
  });

  it('refuses a POST without the session, with a foreign or missing Origin, or with a forged session', async function () {
    const b = await newBorrower(w);
    const { context } = await signIn(b);
    const session = (await context.cookies()).find((c) => c.name === 'borrower_session')?.value as string;
    const url = `${origin}/borrower/api/agent-keys/${b.agentKeyId}/revoke`;
    const post = async (headers: Record<string, string>) =>
      readJsonResponse(await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' }));

    const noSession = await post({ origin });
    assert.equal(noSession.status, 401);
    assert.equal(noSession.json.error.code, 'UNAUTHENTICATED');
    assert.match(noSession.json.error.requestId, /^req_/);

    const foreign = await post({ origin: 'https://evil.example', cookie: `borrower_session=${session}` });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.json.error.code, 'FORBIDDEN');
    const missing = await post({ cookie: `borrower_session=${session}` });
    assert.equal(missing.status, 403);

    const [head, payload] = session.split('.');
    const forged = await post({ origin, cookie: `borrower_session=${head}.${payload}.${'A'.repeat(43)}` });
    assert.equal(forged.status, 401);

    const signInElsewhere = readJsonResponse(
      await fetch(`${origin}/borrower/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, body: '{}' }),
    );
    assert.equal((await signInElsewhere).status, 403);
    assert.equal(await keyStatus(b.agentKeyId), 'active', 'nothing was revoked');

    const mine = await post({ origin, cookie: `borrower_session=${session}` });
    assert.equal(mine.status, 200, JSON.stringify(mine.json));
    assert.deepEqual(mine.json, { key_id: b.agentKeyId, status: 'revoked', changed: true });
  });
});
