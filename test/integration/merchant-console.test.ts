import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { PERMISSIONS } from '../../src/auth/permissions.js';
import { openBrowser, type BrowserHandle } from '../support/browser.js';
import { mintMerchantJwt } from '../helpers/merchant-jwt.js';
import { call, capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, world, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';

/** The merchant console (/merchant), driven in headless Chromium with the payout wallet in the page. */
describe('merchant console: sign-in, payments and timeline, refund with step-up, webhooks, tenancy and refusals', function () {
  this.timeout(300_000);
  let w: World;
  let m: TestMerchant;
  let other: TestMerchant;
  let b: TestBorrower;
  let origin: string;
  let browser: BrowserHandle | undefined;
  /** A CONFIRMED payment of m, and one of the other merchant. */
  let paid: { paymentId: string; orderRef: string; transaction: string };
  let foreignPaymentId: string;

  before(async function () {
    w = await world();
    origin = new URL(w.baseUrl).origin;
    [m, other, b] = await Promise.all([
      newMerchant(w, 'Console merchant', { rateLimits: UNTHROTTLED }),
      newMerchant(w, 'Console stranger', { rateLimits: UNTHROTTLED }),
      newBorrower(w),
    ]);
    const orderRef = `console-${randomUUID().slice(0, 8)}`;
    const v = await newVoucher(w, m, b, '2500', { orderRef });
    const captured = await capture(w, m, v.captureBody, v.idempotencyKey);
    assert.equal(captured.status, 200, JSON.stringify(captured.json));
    const theirs = await newVoucher(w, other, b, '700');
    const foreign = await capture(w, other, theirs.captureBody, theirs.idempotencyKey);
    assert.equal(foreign.status, 200, JSON.stringify(foreign.json));
    foreignPaymentId = foreign.json.receipt.paymentId;
    const confirmed = await pollUntil(w, m, captured.json.receipt.paymentId, 'CONFIRMED');
    paid = { paymentId: confirmed.paymentId, orderRef, transaction: confirmed.transaction };
    browser = await openBrowser();
  });

  after(async function () {
    await browser?.close();
  });

  /** A browser with the payout wallet, signed in to the console with `token` (through the redirect to the sign-in page). */
  async function signIn(token: string): Promise<{ page: Page; context: BrowserContext }> {
    const { page, context } = await browser!.newWalletPage(m.payoutKey, { chainId: w.cli.env.CHAIN_ID });
    await page.goto(`${origin}/merchant/payments`);
    await page.waitForURL((u) => u.pathname === '/merchant/sign-in', { timeout: 30_000 });
    await page.fill('#token', token);
    await Promise.all([page.waitForURL((u) => u.pathname === '/merchant/payments', { timeout: 30_000 }), page.click('#sign-in-button')]);
    return { page, context };
  }

  /** The error page's code and the response status of the page the browser landed on. */
  async function errorCode(page: Page): Promise<string | null> {
    return page.getAttribute('#error', 'data-code');
  }

  /** From the payment page: prepare a partial refund and let the wallet sign and submit it; resolves once the next page loaded. */
  async function refundPart(page: Page, amount: string): Promise<number> {
    await page.goto(`${origin}/merchant/payments/${paid.paymentId}`);
    await page.check('#refund-partial');
    await page.fill('#refund-amount', amount);
    await Promise.all([page.waitForURL((u) => u.pathname.endsWith('/refund'), { timeout: 30_000 }), page.click('#refund-start')]);
    assert.equal(await page.textContent('#refund-amount-shown'), amount);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/merchant/payments/${paid.paymentId}/refunds`) && r.request().method() === 'POST', { timeout: 60_000 }),
      page.click('#sign-refund'),
    ]);
    await page.waitForSelector('#error, #timeline', { timeout: 30_000 });
    return answer.status();
  }

  it('a merchant user signs in, finds the payment by orderRef, sees its timeline to CONFIRMED, refunds part only after step-up, and sends a webhook test event it sees in the delivery log', async function () {
    const { page, context } = await signIn(await mintMerchantJwt({ merchantId: m.merchantId, mfa: false }));
    const cookie = (await context.cookies()).find((c) => c.name === 'merchant_console');
    assert.ok(cookie, 'a session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.path, '/merchant');
    const headers = (await page.goto(`${origin}/merchant/payments`))?.headers() ?? {};
    assert.match(headers['content-security-policy'] ?? '', /default-src 'none'/);
    assert.match(headers['content-security-policy'] ?? '', /form-action 'self'/);
    assert.equal(headers['x-frame-options'], 'DENY');

    // Find by orderRef, open the payment: captured, batch, transaction with its explorer link, CONFIRMED.
    await page.fill('input[name="orderRef"]', paid.orderRef);
    await Promise.all([page.waitForURL((u) => u.searchParams.get('orderRef') === paid.orderRef), page.click('#search button[type="submit"]')]);
    const row = `tr.payment[data-payment-id="${paid.paymentId}"]`;
    assert.equal(await page.locator('tr.payment').count(), 1, 'only the order asked for');
    assert.equal(await page.textContent(`${row} .status`), 'CONFIRMED');
    await Promise.all([page.waitForURL((u) => u.pathname === `/merchant/payments/${paid.paymentId}`), page.click(`${row} a`)]);
    assert.equal(await page.textContent('#payment-status'), 'CONFIRMED');
    assert.equal(await page.textContent('#order-ref'), paid.orderRef);
    for (const step of ['captured', 'batch', 'transaction', 'confirmed']) assert.equal(await page.getAttribute(`#step-${step}`, 'class'), 'done', step);
    assert.equal(await page.textContent('#transaction'), paid.transaction);
    assert.equal(await page.getAttribute('#explorer-link', 'href'), `https://sepolia.basescan.org/tx/${paid.transaction}`);
    assert.ok(await page.isVisible('#step-up-note'), 'the page says a refund needs step-up');

    // Without step-up the refund is refused, as the REST API refuses it, and nothing is refunded.
    assert.equal(await refundPart(page, '500'), 403);
    assert.equal(await errorCode(page), 'STEP_UP_REQUIRED');
    assert.equal((await call(w, 'GET', `/facilitator/payments/${paid.paymentId}`, { token: m.apiKey })).json.refunds, undefined, 'no refund asked for');

    // Step up: sign in again with MFA, then the same refund goes through.
    await Promise.all([page.waitForURL((u) => u.pathname === '/merchant/sign-in'), page.click('#step-up')]);
    await page.fill('#token', await mintMerchantJwt({ merchantId: m.merchantId, mfa: true }));
    await Promise.all([page.waitForURL((u) => u.pathname === '/merchant/payments'), page.click('#sign-in-button')]);
    assert.equal(await page.textContent('#stepped-up'), 'MFA');
    assert.equal(await refundPart(page, '500'), 303);
    assert.equal(new URL(page.url()).pathname, `/merchant/payments/${paid.paymentId}`);
    assert.equal(await page.locator('tr.refund').count(), 1);
    assert.equal(await page.textContent('tr.refund .amount'), '500');
    const polled = await call(w, 'GET', `/facilitator/payments/${paid.paymentId}`, { token: m.apiKey });
    assert.deepEqual(polled.json.refunds.map((r: { amount: string }) => r.amount), ['500'], 'one partial refund, seen through the REST API too');

    // Webhooks: add an endpoint (its secret shown once), send a test event, see it in the delivery log.
    await page.goto(`${origin}/merchant/webhooks`);
    await page.fill('#endpoint-url', `https://127.0.0.1:9/console-${randomUUID().slice(0, 8)}`);
    await Promise.all([page.waitForURL((u) => u.pathname === '/merchant/webhooks'), page.click('#create-endpoint')]);
    assert.match((await page.textContent('#endpoint-secret')) ?? '', /^whsec_/);
    await Promise.all([page.waitForURL((u) => /^\/merchant\/webhooks\/we_/.test(u.pathname)), page.click('.endpoint-link')]);
    // (The refund above may already have sent this new endpoint a payment.refunded event.)
    await Promise.all([page.waitForURL((u) => /^\/merchant\/webhooks\/we_/.test(u.pathname)), page.click('button.send-test')]);
    assert.equal(await page.locator('tr.delivery .event-type', { hasText: 'webhook.test' }).count(), 1, 'the test event is in the delivery log');
    const endpointId = new URL(page.url()).pathname.split('/').at(-1)!;
    const log = await call(w, 'GET', `/facilitator/webhook-endpoints/${endpointId}/deliveries`, { token: m.apiKey });
    assert.ok((log.json.data as { eventType: string }[]).some((d) => d.eventType === 'webhook.test'), 'the same log the REST API shows');

    // Limits and the API key's last use (the REST calls above used it).
    await page.goto(`${origin}/merchant/account`);
    assert.match((await page.textContent('#permissions')) ?? '', /x402:settle:create/);
    assert.equal(await page.textContent('tr.limit[data-limit="capture"] td:nth-child(2)'), '1000000/min');
    assert.notEqual((await page.textContent(`tr.api-key[data-key-id="${m.keyId}"] .last-used`))?.trim(), 'never');

    // The CSV export through the session.
    const csv = await page.evaluate(async (href) => {
      const r = await fetch(href);
      return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
    }, `/merchant/export.csv?from=${new Date(Date.now() - 86400_000).toISOString().slice(0, 10)}`);
    assert.equal(csv.status, 200);
    assert.match(csv.type ?? '', /^text\/csv/);
    assert.ok(csv.text.includes(paid.paymentId), csv.text);
    await context.close();
  });

  it("tenancy: another merchant's payment is not found, by link or by search", async function () {
    const { page, context } = await signIn(await mintMerchantJwt({ merchantId: m.merchantId }));
    const direct = await page.goto(`${origin}/merchant/payments/${foreignPaymentId}`);
    assert.equal(direct?.status(), 404);
    assert.equal(await errorCode(page), 'NOT_FOUND');
    const searched = await page.goto(`${origin}/merchant/payments?paymentId=${foreignPaymentId}`);
    assert.equal(searched?.status(), 404);
    const refund = await page.goto(`${origin}/merchant/payments/${foreignPaymentId}/refund?kind=full`);
    assert.equal(refund?.status(), 404);
    assert.ok(!((await page.content()).includes(other.merchantId)), "nothing of the other merchant's shows");
    await context.close();
  });

  it('refuses a POST without the CSRF token, a form from elsewhere, and bad input with a clear page', async function () {
    const { page, context } = await signIn(await mintMerchantJwt({ merchantId: m.merchantId }));
    const noToken = await page.evaluate(async (href) => {
      const r = await fetch(href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `idempotencyKey=${crypto.randomUUID()}` });
      return { status: r.status, text: await r.text() };
    }, `/merchant/payments/${paid.paymentId}/void`);
    assert.equal(noToken.status, 403);
    assert.match(noToken.text, /CSRF token/);
    // The cookie sent without an Origin (or from another site) is refused before anything else.
    const session = (await context.cookies()).find((c) => c.name === 'merchant_console')!;
    const crossSite = await fetch(`${origin}/merchant/webhooks`, {
      method: 'POST',
      headers: { cookie: `merchant_console=${session.value}`, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: 'url=https://evil.example/hook',
    });
    assert.equal(crossSite.status, 403);
    // Bad input: a clear page that names the field, never a stack trace or a 5xx.
    const bad = await page.goto(`${origin}/merchant/payments?from=2026-13-45&status=PAID`);
    assert.equal(bad?.status(), 400);
    assert.equal(await errorCode(page), 'INVALID_REQUEST');
    const fields = (await page.textContent('#error-fields')) ?? '';
    assert.match(fields, /from/);
    assert.match(fields, /status/);
    assert.doesNotMatch(await page.content(), /at .*\.js:\d+/);
    const partialWithout = await page.goto(`${origin}/merchant/payments/${paid.paymentId}/refund?kind=partial&amount=`);
    assert.equal(partialWithout?.status(), 400);
    const notUuid = await page.goto(`${origin}/merchant/payments/not-a-payment`);
    assert.equal(notUuid?.status(), 404);
    // A bad token at sign-in is a 401 page, and an API key is not a user.
    await page.goto(`${origin}/merchant/sign-in`);
    await page.fill('#token', m.apiKey);
    const [apiKeyAnswer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/merchant/sign-in') && r.request().method() === 'POST'), page.click('#sign-in-button')]);
    assert.equal(apiKeyAnswer.status(), 400);
    await page.goto(`${origin}/merchant/sign-in`);
    await page.fill('#token', 'eyJhbGciOiJub25lIn0.e30.');
    const [badToken] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/merchant/sign-in') && r.request().method() === 'POST'), page.click('#sign-in-button')]);
    assert.equal(badToken.status(), 401);
    await context.close();
  });

  it('a user without x402:settle:create is refused a refund even with step-up, as the REST API refuses it', async function () {
    const token = await mintMerchantJwt({ merchantId: m.merchantId, permissions: [PERMISSIONS.settleRead], mfa: true });
    const { page, context } = await signIn(token);
    await page.goto(`${origin}/merchant/payments/${paid.paymentId}`);
    assert.ok(await page.isVisible('#no-write-permission'));
    assert.equal(await refundPart(page, '100'), 403);
    assert.equal(await errorCode(page), 'FORBIDDEN');
    const rest = await call(w, 'POST', `/facilitator/payments/${paid.paymentId}/refunds`, { token, body: {}, idempotencyKey: randomUUID() });
    assert.equal(rest.status, 403, 'the REST API says the same');
    assert.equal(rest.json.error.code, 'FORBIDDEN');
    const refunds = ((await call(w, 'GET', `/facilitator/payments/${paid.paymentId}`, { token: m.apiKey })).json.refunds ?? []) as { amount: string }[];
    assert.ok(!refunds.some((r) => r.amount === '100'), 'no refund of 100');
    // Signing out ends the session at once: the old cookie no longer opens a page.
    const cookie = (await context.cookies()).find((c) => c.name === 'merchant_console')!;
    await page.goto(`${origin}/merchant/payments`);
    await Promise.all([page.waitForURL((u) => u.pathname === '/merchant/sign-in'), page.click('button.sign-out')]);
    const reused = await fetch(`${origin}/merchant/payments`, { headers: { cookie: `merchant_console=${cookie.value}` }, redirect: 'manual' });
    assert.equal(reused.status, 302);
    assert.match(reused.headers.get('location') ?? '', /^\/merchant\/sign-in/);
    await context.close();
  });
});
