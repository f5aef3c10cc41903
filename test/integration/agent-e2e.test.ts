import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createWalletClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { CreditAgent, newIdempotencyKey } from '@credit-facilitator/agent-client/credit-agent';
import { generateWorkloadKey } from '@credit-facilitator/agent-client/workload-key';
import { creditSettlementAbi, testUsdcAbi } from '../../src/chain/abi.js';
import { makeChain } from '../../src/chain/clients.js';
import { mcpUrl } from '../../src/config/env.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { encodeKey } from '@credit-facilitator/wire/voucher';
import { createDemoMerchant, type DemoMerchant } from '../../examples/demo-merchant/app.js';
import { demoMerchantConfig } from '../../examples/demo-merchant/config.js';
import { createLogger } from '../../src/observability/logger.js';
import { completeSignIn, openBrowser, signOnPage, type BrowserHandle, type WalletPage } from '../support/browser.js';
import { getStack } from '../support/stack.js';
import { metricSum, scrapeApiMetrics } from '../helpers/metrics.js';
import { call, newMerchant, world, type TestMerchant, type World } from '../helpers/world.js';

const PRICE = '2500000';

/**
 * The whole agent side, nothing stubbed: the stock MCP SDK client discovers the authorization
 * server, registers itself with a loopback redirect (DCR), runs PKCE; the borrower signs in and
 * signs every step in headless Chromium with their own wallet; the agent pays the demo merchant
 * with a voucher its workload key signs; the payment settles on-chain; the borrower repays.
 */
describe('agent end to end: OAuth in the browser, onboarding, a paid request, repayment', function () {
  this.timeout(300_000);
  let w: World;
  let browser: BrowserHandle;
  let wp: WalletPage;
  let agent: CreditAgent;
  let merchant: TestMerchant;
  let shop: DemoMerchant;
  const borrowerKey = generatePrivateKey();
  const borrowerWallet = privateKeyToAccount(borrowerKey).address;
  const workloadKey = generateWorkloadKey();
  const signIns: Promise<URL>[] = [];

  before(async () => {
    w = await world();
    browser = await openBrowser();
    wp = await browser.newWalletPage(borrowerKey);
    merchant = await newMerchant(w, 'E2E Shop');
    shop = await createDemoMerchant(
      demoMerchantConfig({ apiKey: merchant.apiKey, merchantId: merchant.merchantId, payTo: merchant.payoutAddress, facilitatorUrl: w.baseUrl, price: PRICE, port: 0, pollIntervalMs: 200 }),
      { logger: createLogger('silent') },
    );
    agent = await CreditAgent.create({
      mcpUrl: mcpUrl(w.cli.env),
      workloadKey,
      clientName: 'E2E agent host',
      // The host "opens the browser": here, headless Chromium on our sign-in page with the borrower's wallet.
      openAuthorizationUrl: (url) => void signIns.push(completeSignIn(wp.page, url.href, agent.oauth.redirectUrl)),
    });
  });

  after(async () => {
    await agent?.close();
    await shop?.close();
    await browser?.close();
  });

  const debtOnChain = async (borrowerId: string) =>
    (await w.publicClient.readContract({ address: w.settlement, abi: creditSettlementAbi, functionName: 'debtOf', args: [uuidToBytes32(borrowerId)] })) as bigint;

  it('onboards, pays the merchant to CONFIRMED, and repays; store and chain agree', async () => {
    const metricsBefore = await scrapeApiMetrics(w);
    await agent.connect();
    assert.equal(signIns.length, 1, 'the borrower signed in once in the browser');
    const landed = await signIns[0]!;
    assert.ok(landed.searchParams.get('code'), 'the browser came back to the loopback redirect with a code');

    const reg = await agent.registerBorrower({ idempotency_key: newIdempotencyKey(), terminal_label: 'e2e laptop' });
    assert.equal(reg.stage, 'WALLET_VERIFIED');
    assert.equal(String(reg.wallet_address).toLowerCase(), borrowerWallet.toLowerCase());
    agent.operationalAgentId = reg.operational_agent_id;
    const borrowerId = reg.borrower_id as string;

    const facility = await agent.completeSigningStep('accept_credit_facility', { idempotency_key: newIdempotencyKey() }, (url) => signOnPage(wp.page, url).then(() => undefined));
    assert.equal(facility.status, 'completed', JSON.stringify(facility));

    const expiresAt = Math.floor(Date.now() / 1000) + 7 * 24 * 3600;
    const keyStep = await agent.completeSigningStep(
      'register_agent_key',
      { idempotency_key: newIdempotencyKey(), public_key: encodeKey(workloadKey.publicKey), per_payment_limit: '10000000', daily_limit: '50000000', expires_at: expiresAt },
      (url) => signOnPage(wp.page, url).then(() => undefined),
    );
    assert.equal(keyStep.status, 'completed', JSON.stringify(keyStep));

    const handle = await agent.claimHandle({ idempotency_key: newIdempotencyKey(), handle: `e2e_${borrowerId.slice(0, 8)}` });
    assert.equal(handle.stage, 'ACTIVE');

    const status = await agent.getBorrowerStatus();
    assert.equal(status.stage, 'ACTIVE');
    const limit = BigInt(status.credit!.limit);
    assert.ok(limit > BigInt(PRICE));

    // The paid request: 402 -> prepare_x402_payment -> local Ed25519 signature -> PAYMENT-SIGNATURE -> capture -> CONFIRMED.
    const paid = await agent.payFetch(`${shop.url}/premium/report`);
    assert.equal(paid.response.status, 200, await paid.response.clone().text());
    assert.ok(paid.paid && paid.paymentId);
    assert.match(String(paid.paymentResponse?.transaction), /^0x[0-9a-f]{64}$/);
    const poll = await call(w, 'GET', `/facilitator/payments/${paid.paymentId}`, { token: merchant.apiKey });
    assert.equal(poll.json.status, 'CONFIRMED');
    assert.equal(poll.json.payer, borrowerId);

    assert.equal(await debtOnChain(borrowerId), BigInt(PRICE));
    const afterPay = await waitFor(async () => {
      const s = await agent.getBorrowerStatus();
      return s.credit!.debt === PRICE ? s : null;
    });
    assert.equal(BigInt(afterPay.credit!.available), limit - BigInt(PRICE));

    // Repayment: the borrower's wallet holds USDC and signs an EIP-3009 ReceiveWithAuthorization.
    const owner = createWalletClient({ account: privateKeyToAccount(w.env.SETTLER_PRIVATE_KEY as Hex), chain: makeChain(w.env.RPC_URL as string, 84532), transport: http(w.env.RPC_URL as string) });
    const mint = await owner.writeContract({ address: w.asset, abi: testUsdcAbi, functionName: 'mint', args: [borrowerWallet, BigInt(PRICE)] });
    await w.publicClient.waitForTransactionReceipt({ hash: mint });

    const repaid = await agent.completeSigningStep('execute_repayment', { idempotency_key: newIdempotencyKey(), amount: PRICE }, (url) => signOnPage(wp.page, url).then(() => undefined), { timeoutMs: 120_000 });
    assert.equal(repaid.status, 'completed', JSON.stringify(repaid));
    assert.equal(await debtOnChain(borrowerId), 0n);
    const afterRepay = await waitFor(async () => {
      const s = await agent.getBorrowerStatus();
      return s.credit!.debt === '0' ? s : null;
    });
    assert.equal(BigInt(afterRepay.credit!.available), limit);

    // The operator's view moved with it.
    const metricsAfter = await scrapeApiMetrics(w);
    assert.ok(metricSum(metricsAfter, 'x402_captures_total', 'outcome="queued"') > metricSum(metricsBefore, 'x402_captures_total', 'outcome="queued"'));
    assert.ok(metricSum(metricsAfter, 'x402_mcp_tool_calls_total', 'tool="prepare_x402_payment",outcome="ok"') >= 1);
    assert.ok(metricSum(metricsAfter, 'x402_mcp_tool_calls_total', 'tool="execute_repayment",outcome="ok"') >= 1);
  });

  it('no log line carries a token, a key or a signature secret', async () => {
    const stack = await getStack();
    const logs = join(stack.dataDir, 'logs');
    const text = readdirSync(logs).map((f) => readFileSync(join(logs, f), 'utf8')).join('\n');
    const tokens = agent.oauth.tokens();
    const secrets = [tokens?.access_token, tokens?.refresh_token, encodeKey(workloadKey.privateKey), borrowerKey.slice(2), merchant.apiKey].filter(
      (s): s is string => typeof s === 'string' && s.length > 0,
    );
    assert.ok(secrets.length >= 4);
    for (const s of secrets) assert.ok(!text.includes(s), 'a secret appeared in the logs');
    assert.ok(!/eyJ[A-Za-z0-9_-]{10,}\.eyJ/.test(text), 'no JWT-looking string in the logs');
  });
});

async function waitFor<T>(probe: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 300));
  }
}
