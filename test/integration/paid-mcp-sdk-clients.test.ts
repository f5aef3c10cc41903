import assert from 'node:assert/strict';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { CreditAgent } from '@credit-facilitator/agent-client/credit-agent';
import { X402McpTransport } from '@credit-facilitator/agent-client/mcp-payment-transport';
import type { PaidMcpOptions, ToolCaller } from '@credit-facilitator/agent-client/paid-mcp';
import { workloadKeyFromPrivate } from '@credit-facilitator/agent-client/workload-key';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { decodePrivateKey } from '@credit-facilitator/wire/voucher';
import { mcpUrl } from '../../src/config/env.js';
import { startPaidMcpServer, type PaidMcpServer } from '../../examples/paid-mcp-server/app.js';
import type { CapturedPayment } from '../helpers/captures.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { ADVERTISES_PAYMENT } from '../helpers/mcp-2026-caller.js';
import { onboardBorrower, type OnboardedBorrower } from '../helpers/onboarding.js';
import { newMerchant, world, type TestMerchant, type World } from '../helpers/world.js';

const FORECAST = '250000';
type Result = Record<string, any>;
type Closable = { close(): Promise<void> };

/**
 * PaidMcpClient on the stock MCP clients of both SDK generations (issue 46): the v1
 * `@modelcontextprotocol/sdk` Client (MCP 2025-11-25, the tool-result binding only) and the v2
 * `@modelcontextprotocol/client` Client pinned to 2026-07-28, in the tool-result binding and, through
 * X402McpTransport, in the extension binding. Each pays the example server's forecast to
 * CONFIRMED; the ledger agrees with the chain.
 */
describe('paid MCP tools: PaidMcpClient on the stock v1 and v2 MCP clients, both bindings, to CONFIRMED', function () {
  let w: World;
  let m: TestMerchant;
  let b: OnboardedBorrower;
  let agent: CreditAgent;
  let shop: PaidMcpServer;
  const open: Closable[] = [];
  const payments: CapturedPayment[] = [];

  async function v1Client(transport?: X402McpTransport): Promise<ClientV1> {
    const c = new ClientV1({ name: 'paying-agent-v1', version: '1.0.0' });
    await c.connect(transport ?? new TransportV1(new URL(shop.url)));
    open.push(c);
    return c;
  }

  async function v2Client(transport?: X402McpTransport): Promise<ClientV2> {
    const c = new ClientV2({ name: 'paying-agent-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await c.connect(transport ?? new TransportV2(new URL(shop.url2026)));
    open.push(c);
    return c;
  }

  /** Pays forecast for `city` through `client` and checks the receipt and the binding the server asked in. */
  async function paysForecast(client: ToolCaller, city: string, binding: 'tool-result' | 'extension', opts: Omit<PaidMcpOptions, 'prepare' | 'privateKey'> = {}) {
    const paid = agent.paidMcpClient(client, opts);
    const r = await paid.callTool<Result>({ name: 'forecast', arguments: { city } });
    assert.equal(r.paid, true);
    assert.equal(r.binding, binding);
    assert.equal(r.result.isError, undefined, JSON.stringify(r.result));
    assert.equal(r.result.structuredContent.city, city);
    assert.equal(r.paymentResponse?.success, true);
    assert.equal(r.paymentResponse?.extra?.status, 'CONFIRMED');
    assert.match(r.paymentResponse?.transaction ?? '', /^0x[0-9a-f]{64}$/);
    assert.equal(r.paymentRequired?.accepts[0]?.amount, FORECAST);
    assert.equal(paid.spent, FORECAST);
    payments.push({ paymentId: r.paymentId!, amount: BigInt(FORECAST), merchant: m, borrowerId: b.borrowerId });
    return r;
  }

  before(async function () {
    this.timeout(300_000);
    w = await world();
    m = await newMerchant(w, 'Paid MCP SDK Clients');
    b = await onboardBorrower(w);
    const key = workloadKeyFromPrivate(decodePrivateKey(b.agentPrivateKey)!);
    shop = await startPaidMcpServer({ facilitatorUrl: w.baseUrl, apiKey: m.apiKey, merchantId: m.merchantId, payTo: m.payoutAddress, port: 0 });
    agent = await CreditAgent.create({ mcpUrl: mcpUrl(w.cli.env), workloadKey: key, openAuthorizationUrl: () => undefined, operationalAgentId: b.operationalAgentId, signInTimeoutMs: 1500 });
    agent.oauth.saveTokens({ access_token: await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES }), token_type: 'Bearer', expires_in: 900 });
    await agent.connect();
  });

  after(async function () {
    for (const c of open) await c.close().catch(() => undefined);
    await agent?.close();
    await shop?.close();
  });

  it('server/discover declares org.x402/payment; the v1 server (2025-11-25) does not', async function () {
    const v2 = await v2Client();
    assert.equal(v2.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.deepEqual(v2.getServerCapabilities()?.extensions?.['org.x402/payment'], {});
    const v1 = await v1Client();
    assert.equal((v1.getServerCapabilities() as Result | undefined)?.extensions, undefined);
  });

  it('v1 Client, tool-result binding: paid to CONFIRMED', async function () {
    this.timeout(180_000);
    await paysForecast(await v1Client(), 'Oslo', 'tool-result');
  });

  it('v1 Client through X402McpTransport: a 2025-11-25 session is never advertised, so still the tool-result binding, paid to CONFIRMED', async function () {
    this.timeout(180_000);
    const transport = new X402McpTransport(new TransportV1(new URL(shop.url)));
    await paysForecast(await v1Client(transport), 'Bergen', 'tool-result', { transport });
  });

  it('the v1 server ignores a 2026-07-28 envelope claimed in _meta of a 2025 session: the tool-result binding, no resultType', async function () {
    const r = (await (await v1Client()).callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', ...ADVERTISES_PAYMENT } })) as Result;
    assert.equal(r.isError, true);
    assert.equal(r.resultType, undefined);
    assert.equal(r.structuredContent.accepts[0].amount, FORECAST);
  });

  it('v2 Client pinned to 2026-07-28, not advertising: the tool-result binding with resultType complete, paid to CONFIRMED', async function () {
    this.timeout(180_000);
    const v2 = await v2Client();
    const unpaid = (await v2.callTool({ name: 'forecast', arguments: { city: 'Pune' } })) as Result;
    assert.equal(unpaid.isError, true, 'the SDK passes the tool-result binding through as a tool error');
    assert.deepEqual(JSON.parse(unpaid.content[0].text), unpaid.structuredContent);
    await paysForecast(v2, 'Pune', 'tool-result');
  });

  it('v2 Client pinned to 2026-07-28 through X402McpTransport: advertises org.x402/payment, gets the extension binding, paid to CONFIRMED', async function () {
    this.timeout(180_000);
    const transport = new X402McpTransport(new TransportV2(new URL(shop.url2026)));
    const v2 = await v2Client(transport);
    assert.equal(transport.protocolVersion, '2026-07-28');
    const sent: Result[] = [];
    const send = transport.inner.send.bind(transport.inner);
    transport.inner.send = (message: Result, options?: unknown) => {
      sent.push(message);
      return send(message, options);
    };
    const r = await paysForecast(v2, 'Lagos', 'extension', { transport });
    const calls = sent.filter((s) => s.method === 'tools/call');
    assert.equal(calls.length, 2, 'the unpaid call and the paid one');
    for (const c of calls) {
      const meta = c.params._meta as Result;
      assert.deepEqual(meta['io.modelcontextprotocol/clientCapabilities'].extensions, { 'org.x402/payment': {} }, 'advertised per request');
      assert.equal(meta['io.modelcontextprotocol/protocolVersion'], '2026-07-28', "the SDK's own envelope is kept");
      assert.ok(!Object.keys(meta).some((k) => k.startsWith('x402-credit.local/')), 'the local mark never leaves the process');
    }
    assert.equal(calls[0]!.params._meta['x402/payment'], undefined);
    assert.equal(calls[1]!.params._meta['x402/payment'].accepted.amount, FORECAST);
    assert.equal(r.result.resultType, undefined, 'the SDK consumed resultType complete');

    // The application's own calls on the same client are not advertised: it gets the tool-result binding.
    const own = (await v2.callTool({ name: 'forecast', arguments: { city: 'Lagos' } })) as Result;
    assert.equal(own.isError, true);
    assert.equal(own.structuredContent.accepts[0].amount, FORECAST);
  });

  it('the ledger agrees: each paid call once, CONFIRMED with its PaymentSettled event, payout and debt equal the sums', async function () {
    this.timeout(180_000);
    assert.equal(payments.length, 4);
    assert.equal(new Set(payments.map((p) => p.paymentId)).size, 4);
    await assertLedgerAgrees(w, payments);
  });
});
