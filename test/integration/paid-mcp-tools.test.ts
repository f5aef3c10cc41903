import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreditAgent } from '@credit-facilitator/agent-client/credit-agent';
import { signPreparedPayment } from '@credit-facilitator/agent-client/voucher-signer';
import { workloadKeyFromPrivate, type WorkloadKey } from '@credit-facilitator/agent-client/workload-key';
import type { PaymentRequiredMessage } from '@credit-facilitator/agent-client/x402-messages';
import { BudgetExceededError } from '@credit-facilitator/agent-client/mcp-budget';
import { PaymentDeclinedError } from '@credit-facilitator/agent-client/paid-mcp';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { decodePrivateKey, signVoucher } from '@credit-facilitator/wire/voucher';
import { mcpUrl } from '../../src/config/env.js';
import { startPaidMcpServer, type PaidMcpServer } from '../../examples/paid-mcp-server/app.js';
import type { CapturedPayment } from '../helpers/captures.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { ADVERTISES_PAYMENT, rawCaller2026 } from '../helpers/mcp-2026-caller.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { onboardBorrower, type OnboardedBorrower } from '../helpers/onboarding.js';
import { newMerchant, world, type TestMerchant, type World } from '../helpers/world.js';

const FORECAST = '250000';
const QUOTE = '50000';

type Result = Record<string, any>;

/**
 * Paid MCP tools end to end (issue 46): an agent onboarded to ACTIVE, connected to our MCP endpoint,
 * pays the example paid MCP server's tools over x402's MCP transport, to CONFIRMED, reconciled
 * against the chain; each refusal checked on the wire.
 */
describe('paid MCP tools: an agent pays the example paid MCP server on credit (x402 MCP transport)', function () {
  let w: World;
  let m: TestMerchant;
  let other: TestMerchant;
  let b: OnboardedBorrower;
  let key: WorkloadKey;
  let agent: CreditAgent;
  let shop: PaidMcpServer;
  let client: Client;
  const payments: CapturedPayment[] = [];

  const raw = (params: Record<string, unknown>) => client.callTool(params as never) as Promise<Result>;
  const errorOf = (r: Result) => String(r.structuredContent?.error ?? r.paymentRequired?.error);
  const captured = (paymentId: string, amount: string) => payments.push({ paymentId, amount: BigInt(amount), merchant: m, borrowerId: b.borrowerId });

  /** A fresh PaymentRequired from the server for this call, and the agent's signed payment for it (optionally for edited terms). */
  async function signedFor(name: string, args: Record<string, unknown>, edit: (pr: PaymentRequiredMessage) => PaymentRequiredMessage = (pr) => pr) {
    const required = edit((await raw({ name, arguments: args })).structuredContent as PaymentRequiredMessage);
    const offer = required.accepts[0]!;
    const prepared = await agent.prepareX402Payment({ payment_required: required as unknown as Record<string, unknown>, order_ref: String(offer.extra.orderRef), operational_agent_id: b.operationalAgentId });
    return { required, signed: signPreparedPayment(prepared, { paymentRequired: required, accepted: offer, operationalAgentId: b.operationalAgentId }, key.privateKey) };
  }

  before(async function () {
    this.timeout(300_000);
    w = await world();
    m = await newMerchant(w, 'Paid MCP Tools');
    other = await newMerchant(w, 'Another Tool Shop');
    b = await onboardBorrower(w);
    key = workloadKeyFromPrivate(decodePrivateKey(b.agentPrivateKey)!);
    shop = await startPaidMcpServer({ facilitatorUrl: w.baseUrl, apiKey: m.apiKey, merchantId: m.merchantId, payTo: m.payoutAddress, forecastPrice: '$0.25', quotePrice: '$0.05', port: 0 });
    agent = await CreditAgent.create({ mcpUrl: mcpUrl(w.cli.env), workloadKey: key, openAuthorizationUrl: () => undefined, operationalAgentId: b.operationalAgentId, signInTimeoutMs: 1500 });
    agent.oauth.saveTokens({ access_token: await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES }), token_type: 'Bearer', expires_in: 900 });
    await agent.connect();
    client = new Client({ name: 'paying-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(shop.url)));
  });

  after(async function () {
    await client?.close().catch(() => undefined);
    await agent?.close();
    await shop?.close();
  });

  it('no payment: the tool-result binding (isError, PaymentRequired in structuredContent and content[0].text); the tool does not run; free tools stay free', async function () {
    const r = await raw({ name: 'forecast', arguments: { city: 'Oslo' } });
    assert.equal(r.isError, true);
    const pr = r.structuredContent as PaymentRequiredMessage;
    assert.equal(pr.x402Version, 2);
    assert.equal(pr.error, 'Payment required to call forecast');
    assert.equal(pr.resource.url, 'mcp://tool/forecast');
    assert.deepEqual(JSON.parse(r.content[0].text), pr);
    const offer = pr.accepts[0]!;
    assert.equal(offer.scheme, 'credit');
    assert.equal(offer.amount, FORECAST);
    assert.equal(offer.payTo, m.payoutAddress.toLowerCase());
    assert.equal(offer.extra.merchantId, m.merchantId);
    assert.equal(shop.runs.forecast, 0);
    assert.deepEqual((await raw({ name: 'ping', arguments: {} })).content, [{ type: 'text', text: 'pong' }]);
  });

  it('PaidMcpClient pays forecast to CONFIRMED: prepare over our MCP endpoint, local signature, receipt in _meta x402/payment-response; the approval hook sees the offer', async function () {
    this.timeout(180_000);
    const asked: string[] = [];
    const paid = agent.paidMcpClient(client, { budget: { maxPerCall: '300000', maxTotal: '1000000' }, approve: (a) => { asked.push(`${a.tool}:${a.amount}`); return true; } });
    const r = await paid.callTool<Result>({ name: 'forecast', arguments: { city: 'Oslo' } });
    assert.equal(r.paid, true);
    assert.equal(r.result.isError, undefined, JSON.stringify(r.result));
    assert.equal(r.result.structuredContent.city, 'Oslo');
    assert.equal(r.paymentResponse?.success, true);
    assert.equal(r.paymentResponse?.extra?.status, 'CONFIRMED');
    assert.match(r.paymentResponse?.transaction ?? '', /^0x[0-9a-f]{64}$/);
    assert.equal(r.paymentResponse?.payer, b.borrowerId);
    assert.deepEqual(asked, [`forecast:${FORECAST}`]);
    assert.equal(paid.spent, FORECAST);
    assert.equal(shop.runs.forecast, 1);
    captured(r.paymentId!, FORECAST);
  });

  it('runAfter captured: quote runs on the accepted capture (QUEUED), and still reaches CONFIRMED', async function () {
    this.timeout(120_000);
    const paid = agent.paidMcpClient(client);
    const r = await paid.callTool<Result>({ name: 'quote', arguments: { symbol: 'ACME' } });
    assert.deepEqual(r.result.content, [{ type: 'text', text: 'ACME: 42.00' }]);
    assert.equal(r.paymentResponse?.success, true);
    assert.notEqual(r.paymentResponse?.extra?.status, 'CONFIRMED');
    captured(r.paymentId!, QUOTE);
  });

  it('a retried call (same payment, same call) replays the capture: the tool runs again, one payment', async function () {
    this.timeout(180_000);
    const { signed } = await signedFor('forecast', { city: 'Lima' });
    const meta = { 'x402/payment': signed.paymentPayload };
    const first = await raw({ name: 'forecast', arguments: { city: 'Lima' }, _meta: meta });
    const again = await raw({ name: 'forecast', arguments: { city: 'Lima' }, _meta: meta });
    const id = first._meta['x402/payment-response'].extra.paymentId;
    assert.equal(again.isError, undefined, JSON.stringify(again));
    assert.equal(again._meta['x402/payment-response'].extra.paymentId, id);
    assert.equal(await w.store.c.payments.countDocuments({ orderRef: signed.voucher.orderRef }), 1);
    captured(id, FORECAST);

    // Replayed to another call (other arguments, or another tool): refused, nothing charged.
    const elsewhere = await raw({ name: 'forecast', arguments: { city: 'Quito' }, _meta: meta });
    assert.equal(elsewhere.isError, true);
    assert.match(errorOf(elsewhere), /^call_mismatch/);
    assert.equal(elsewhere._meta?.['x402/payment-response'], undefined);
    const otherTool = await raw({ name: 'quote', arguments: { symbol: 'Lima' }, _meta: meta });
    assert.match(errorOf(otherTool), /^(resource_mismatch|amount_mismatch)/);
  });

  it('refuses a voucher for the wrong amount, for another payee, or expired; none is charged and the tool does not run', async function () {
    this.timeout(120_000);
    const runs = shop.runs.forecast;
    const cheap = await signedFor('forecast', { city: 'Oslo' }, (pr) => ({ ...pr, accepts: [{ ...pr.accepts[0]!, amount: '1000' }] }));
    const r1 = await raw({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'x402/payment': cheap.signed.paymentPayload } });
    assert.match(errorOf(r1), /^amount_mismatch/);
    assert.equal(r1.structuredContent.accepts[0].amount, FORECAST, 'a fresh PaymentRequired at the real price');

    const elsewhere = await signedFor('forecast', { city: 'Oslo' }, (pr) => ({ ...pr, accepts: [{ ...pr.accepts[0]!, payTo: other.payoutAddress.toLowerCase(), extra: { ...pr.accepts[0]!.extra, merchantId: other.merchantId } }] }));
    const r2 = await raw({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'x402/payment': elsewhere.signed.paymentPayload } });
    assert.match(errorOf(r2), /^recipient_mismatch/);

    const fresh = await signedFor('forecast', { city: 'Oslo' });
    const v = { ...fresh.signed.voucher, issuedAt: fresh.signed.voucher.issuedAt - 7200, expiresAt: fresh.signed.voucher.issuedAt - 3600 };
    const expired = { ...fresh.signed.paymentPayload, payload: { voucher: v, signature: signVoucher(v, key.privateKey) } };
    const r3 = await raw({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'x402/payment': expired } });
    assert.equal(r3.isError, true);
    assert.match(errorOf(r3), /^voucher_expired/);

    for (const s of [cheap, elsewhere, fresh]) assert.equal(await w.store.c.payments.countDocuments({ orderRef: s.signed.voucher.orderRef }), 0);
    assert.equal(shop.runs.forecast, runs);
  });

  it('budget and approval: over the per-call or total limit, or not approved, nothing is prepared or paid', async function () {
    await assert.rejects(agent.paidMcpClient(client, { budget: { maxPerCall: '100000' } }).callTool({ name: 'forecast', arguments: { city: 'Oslo' } }), (e: unknown) => e instanceof BudgetExceededError && e.code === 'over_per_call');
    await assert.rejects(agent.paidMcpClient(client, { budget: { maxTotal: '200000' } }).callTool({ name: 'forecast', arguments: { city: 'Oslo' } }), (e: unknown) => e instanceof BudgetExceededError && e.code === 'over_total');
    const declined = agent.paidMcpClient(client, { approve: () => false });
    await assert.rejects(declined.callTool({ name: 'forecast', arguments: { city: 'Oslo' } }), PaymentDeclinedError);
    assert.equal(declined.spent, '0');
  });

  it('the extension binding at MCP 2026-07-28: payment_required for a client advertising org.x402/payment, then paid to CONFIRMED', async function () {
    this.timeout(180_000);
    const modern = rawCaller2026(shop.url2026);
    const unpaid = await modern.callTool({ name: 'forecast', arguments: { city: 'Pune' }, _meta: ADVERTISES_PAYMENT });
    assert.equal(unpaid.resultType, 'payment_required');
    assert.equal(unpaid.paymentRequired.accepts[0].amount, FORECAST);
    const plain = await modern.callTool({ name: 'forecast', arguments: { city: 'Pune' } });
    assert.equal(plain.resultType, 'complete');
    assert.equal(plain.isError, true);

    const paid = agent.paidMcpClient(modern, { advertiseExtension: true });
    const r = await paid.callTool<Result>({ name: 'forecast', arguments: { city: 'Pune' } });
    assert.equal(r.paymentRequired?.resource.url, 'mcp://tool/forecast');
    assert.equal(r.result.resultType, 'complete');
    assert.equal(r.result.structuredContent.city, 'Pune');
    assert.equal(r.paymentResponse?.extra?.status, 'CONFIRMED');
    captured(r.paymentId!, FORECAST);
  });

  it('the extension binding refuses as the spec says: no payment, wrong amount, other payee, expired, replayed to another call each answer payment_required (fresh PaymentRequired, nothing charged, the tool does not run); a retried call replays its capture', async function () {
    this.timeout(180_000);
    const modern = rawCaller2026(shop.url2026);
    const call = (city: string, payment?: unknown) => modern.callTool({ name: 'forecast', arguments: { city }, _meta: { ...ADVERTISES_PAYMENT, ...(payment ? { 'x402/payment': payment } : {}) } });
    const refusedWith = (r: Result, reason: RegExp) => {
      assert.equal(r.resultType, 'payment_required', JSON.stringify(r));
      assert.equal(r.isError, undefined, 'not the tool-result binding');
      // The v2 server SDK normalizes a content-less tools/call result to content: [] (no tool content either way).
      assert.deepEqual(r.content ?? [], [], 'no tool content');
      assert.match(String(r.paymentRequired.error), reason);
      assert.equal(r.paymentRequired.accepts[0].amount, FORECAST, 'a fresh PaymentRequired at the real price');
      assert.equal(r._meta?.['x402/payment-response'], undefined, 'refused before any capture');
    };
    const runs = shop.runs.forecast;
    refusedWith(await call('Oslo'), /^Payment required to call forecast$/);

    const cheap = await signedFor('forecast', { city: 'Oslo' }, (pr) => ({ ...pr, accepts: [{ ...pr.accepts[0]!, amount: '1000' }] }));
    refusedWith(await call('Oslo', cheap.signed.paymentPayload), /^amount_mismatch/);
    const elsewhere = await signedFor('forecast', { city: 'Oslo' }, (pr) => ({ ...pr, accepts: [{ ...pr.accepts[0]!, payTo: other.payoutAddress.toLowerCase(), extra: { ...pr.accepts[0]!.extra, merchantId: other.merchantId } }] }));
    refusedWith(await call('Oslo', elsewhere.signed.paymentPayload), /^recipient_mismatch/);
    const stale = await signedFor('forecast', { city: 'Oslo' });
    const v = { ...stale.signed.voucher, issuedAt: stale.signed.voucher.issuedAt - 7200, expiresAt: stale.signed.voucher.issuedAt - 3600 };
    refusedWith(await call('Oslo', { ...stale.signed.paymentPayload, payload: { voucher: v, signature: signVoucher(v, key.privateKey) } }), /^voucher_expired/);
    for (const s of [cheap, elsewhere, stale]) assert.equal(await w.store.c.payments.countDocuments({ orderRef: s.signed.voucher.orderRef }), 0);
    assert.equal(shop.runs.forecast, runs);

    // Replayed: the same call again replays the capture (one payment); another call is refused.
    const good = await signedFor('forecast', { city: 'Accra' });
    const first = await call('Accra', good.signed.paymentPayload);
    const again = await call('Accra', good.signed.paymentPayload);
    assert.equal(first.resultType, 'complete');
    assert.equal(again.resultType, 'complete', JSON.stringify(again));
    const id = first._meta['x402/payment-response'].extra.paymentId;
    assert.equal(again._meta['x402/payment-response'].extra.paymentId, id);
    assert.equal(await w.store.c.payments.countDocuments({ orderRef: good.signed.voucher.orderRef }), 1);
    captured(id, FORECAST);
    refusedWith(await call('Quito', good.signed.paymentPayload), /^call_mismatch/);
  });

  it('the ledger agrees: every paid call once, CONFIRMED with its PaymentSettled event, payout and debt equal the sums', async function () {
    this.timeout(180_000);
    assert.equal(payments.length, 5);
    assert.equal(new Set(payments.map((p) => p.paymentId)).size, 5);
    await assertLedgerAgrees(w, payments);
  });
});
