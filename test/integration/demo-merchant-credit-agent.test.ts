import assert from 'node:assert/strict';
import { CreditAgent } from '@credit-facilitator/agent-client/credit-agent';
import { CreditToolError } from '@credit-facilitator/agent-client/tool-types';
import { workloadKeyFromPrivate } from '@credit-facilitator/agent-client/workload-key';
import { mcpUrl } from '../../src/config/env.js';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { decodePrivateKey } from '@credit-facilitator/wire/voucher';
import { createDemoMerchant, type DemoMerchant } from '../../examples/demo-merchant/app.js';
import { demoMerchantConfig } from '../../examples/demo-merchant/config.js';
import { createLogger } from '../../src/observability/logger.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { onboardBorrower, type OnboardedBorrower } from '../helpers/onboarding.js';
import { newMerchant, world, type TestMerchant, type World } from '../helpers/world.js';

const PRICE = '330000';

/**
 * CreditAgent over the real MCP endpoint. The browser sign-in is replaced by a token minted with
 * the authorization server's key (the OAuth + Chromium round trip is the end-to-end test's job).
 */
describe('CreditAgent: MCP tools and payFetch against the demo merchant', function () {
  let w: World;
  let m: TestMerchant;
  let b: OnboardedBorrower;
  let dm: DemoMerchant;
  const agents: CreditAgent[] = [];

  async function agentWithToken(expiresIn = 900, opened: URL[] = []): Promise<CreditAgent> {
    const agent = await CreditAgent.create({
      mcpUrl: mcpUrl(w.cli.env),
      workloadKey: workloadKeyFromPrivate(decodePrivateKey(b.agentPrivateKey)!),
      openAuthorizationUrl: (u) => void opened.push(u),
      signInTimeoutMs: 1500,
    });
    agents.push(agent);
    const token = await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES, expiresIn });
    agent.oauth.saveTokens({ access_token: token, token_type: 'Bearer', expires_in: expiresIn });
    return agent;
  }

  before(async function () {
    this.timeout(300_000);
    w = await world();
    m = await newMerchant(w, 'Agent Shop');
    b = await onboardBorrower(w);
    dm = await createDemoMerchant(
      demoMerchantConfig({ apiKey: m.apiKey, merchantId: m.merchantId, payTo: m.payoutAddress, facilitatorUrl: w.baseUrl, price: PRICE, port: 0, pollIntervalMs: 200 }),
      { logger: createLogger('silent') },
    );
  });
  after(async function () {
    await Promise.all(agents.map((a) => a.close()));
    await dm?.close();
  });

  it('reads the borrower status through typed tools', async function () {
    const agent = await agentWithToken();
    await agent.connect();
    const status = await agent.getBorrowerStatus();
    assert.equal(status.borrower_id, b.borrowerId);
    assert.equal(status.stage, 'ACTIVE');
    assert.equal(status.operational_agents.length, 1);
  });

  it('payFetch: prepare_x402_payment over MCP, local checks and signature, capture, CONFIRMED delivery', async function () {
    const agent = await agentWithToken();
    agent.operationalAgentId = b.operationalAgentId;
    await agent.connect();
    const paid = await agent.payFetch(`${dm.url}/premium/forecast?order=ca-1`);
    assert.equal(paid.response.status, 200, await paid.response.clone().text());
    assert.equal(paid.paymentResponse?.success, true);
    assert.match(paid.paymentResponse?.transaction ?? '', /^0x[0-9a-f]{64}$/);
    assert.equal(paid.paymentResponse?.payer, b.borrowerId);
    const payment = await w.store.c.payments.findOne({ _id: paid.paymentId! });
    assert.equal(payment?.idempotencyKey, paid.idempotencyKey);
    assert.equal(payment?.orderRef, 'ca-1');
    assert.equal(payment?.amount, PRICE);
  });

  it('turns a tool error into a typed CreditToolError', async function () {
    const agent = await agentWithToken();
    await agent.connect();
    await assert.rejects(
      agent.prepareX402Payment({ payment_required: 'not a header' }),
      (e: unknown) => e instanceof CreditToolError && e.tool === 'prepare_x402_payment' && e.code === 'INVALID_INPUT',
    );
  });

  it('near expiry without a refresh token, re-authorizes: DCR, then an authorization URL asking for every scope with PKCE', async function () {
    const opened: URL[] = [];
    const agent = await agentWithToken(100, opened);
    await assert.rejects(agent.ensureFreshToken(), /no sign-in/);
    assert.equal(opened.length, 1);
    const url = opened[0]!;
    assert.equal(url.pathname, '/oauth/auth');
    assert.deepEqual(new Set(url.searchParams.get('scope')!.split(' ')), new Set(SCOPES));
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('resource'), mcpUrl(w.cli.env));
    assert.match(url.searchParams.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.ok(agent.oauth.clientInformation()?.client_id, 'registered by DCR');
    assert.equal(url.searchParams.get('state'), agent.oauth.pendingState);
  });
});
