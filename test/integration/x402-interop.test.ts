import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { Network } from '@x402/core/types';
import { decodeEventLog } from 'viem';
import { CreditAgent } from '@credit-facilitator/agent-client/credit-agent';
import { workloadKeyFromPrivate, type WorkloadKey } from '@credit-facilitator/agent-client/workload-key';
import { mcpUrl } from '../../src/config/env.js';
import { isUuidV4, uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { decodePrivateKey } from '@credit-facilitator/wire/voucher';
import { preparePayment } from '../../src/agents/prepare-payment.js';
import { CreditSchemeClient } from '@credit-facilitator/agent-client/x402-scheme-client';
import { CreditFacilitatorClient, CreditSchemeServer, captureIdempotencyKey } from '@credit-facilitator/x402-credit';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { agentDeps, onboardBorrower, type OnboardedBorrower } from '../helpers/onboarding.js';
import { call, newMerchant, paymentSettledEvent, pollUntil, world, type TestMerchant, type World } from '../helpers/world.js';

const PRICE_USD = '$0.42';
const PRICE = '420000';

/**
 * The reference x402 SDKs, unmodified, on both ends: an express app protected by @x402/express's
 * paymentMiddleware with our CreditFacilitatorClient and CreditSchemeServer, and an agent using
 * @x402/fetch's wrapFetchWithPayment with our CreditSchemeClient over a real CreditAgent (MCP).
 */
describe('x402 reference SDKs: @x402/fetch agent pays an @x402/express merchant through the credit facilitator', function () {
  let w: World;
  let m: TestMerchant;
  let b: OnboardedBorrower;
  let key: WorkloadKey;
  let network: Network;
  let asset: string;
  let agent: CreditAgent;
  let server: Server;
  let shopUrl: string;
  let handlerCalls = 0;
  /** What the middleware talks to; a test swaps it to change how long settle waits. */
  let facilitator: CreditFacilitatorClient;
  const patient = () => new CreditFacilitatorClient({ baseUrl: w.baseUrl, apiKey: m.apiKey, pollIntervalMs: 200, confirmTimeoutMs: 60_000 });

  /** Every request the agent's wrapped fetch sends, as it leaves (after our Idempotency-Key wrapper). */
  const sent: Request[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const r = new Request(input, init);
    sent.push(r.clone());
    return fetch(r);
  };

  function payingFetch(scheme: CreditSchemeClient) {
    const client = new x402Client().register(network, scheme);
    // The reference client only pays known stablecoins unless told otherwise; this is our settlement asset.
    client.setSpendControls({ allowedAssets: [{ network, asset, maxAmountPerPayment: '1000000' }] });
    return wrapFetchWithPayment(scheme.withIdempotencyKey(recordingFetch), client);
  }

  before(async function () {
    this.timeout(300_000);
    w = await world();
    m = await newMerchant(w, 'Express Shop');
    b = await onboardBorrower(w);
    key = workloadKeyFromPrivate(decodePrivateKey(b.agentPrivateKey)!);
    facilitator = patient();
    const supported = await facilitator.getSupported();
    const kind = supported.kinds.find((k) => k.scheme === 'credit')!;
    network = kind.network;
    asset = String(kind.extra?.asset).toLowerCase();

    const delegate: FacilitatorClient = {
      verify: (p, r) => facilitator.verify(p, r),
      settle: (p, r) => facilitator.settle(p, r),
      getSupported: () => facilitator.getSupported(),
    };
    const resourceServer = new x402ResourceServer(delegate).register(network, new CreditSchemeServer({ merchantId: m.merchantId, facilitatorUrl: w.baseUrl }));
    const app = express();
    app.use(
      paymentMiddleware(
        {
          'GET /premium/:item': { accepts: { scheme: 'credit', network, payTo: m.payoutAddress, price: PRICE_USD }, description: 'Premium item', mimeType: 'application/json' },
          'GET /broken': { accepts: { scheme: 'credit', network, payTo: m.payoutAddress, price: PRICE_USD }, description: 'Always fails' },
        },
        resourceServer,
      ),
    );
    app.get('/premium/:item', (req, res) => {
      handlerCalls += 1;
      res.json({ item: req.params.item, content: 'the premium content' });
    });
    app.get('/broken', (_req, res) => {
      res.status(500).json({ error: 'out of stock' });
    });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    shopUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    agent = await CreditAgent.create({
      mcpUrl: mcpUrl(w.cli.env),
      workloadKey: key,
      openAuthorizationUrl: () => undefined,
      operationalAgentId: b.operationalAgentId,
      signInTimeoutMs: 1500,
    });
    const token = await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES });
    agent.oauth.saveTokens({ access_token: token, token_type: 'Bearer', expires_in: 900 });
    await agent.connect();
  });

  after(async function () {
    await agent?.close();
    await new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  });

  beforeEach(function () {
    sent.length = 0;
    facilitator = patient();
  });

  it('advertises a credit requirement through the stock middleware: our asset, base units, merchant, a fresh order per 402', async function () {
    const [a, c] = await Promise.all([fetch(`${shopUrl}/premium/atlas`), fetch(`${shopUrl}/premium/atlas`)]);
    assert.equal(a.status, 402);
    const required = decodePaymentRequiredHeader(a.headers.get('payment-required')!);
    const other = decodePaymentRequiredHeader(c.headers.get('payment-required')!);
    assert.equal(required.x402Version, 2);
    assert.equal(required.resource.url, `${shopUrl}/premium/atlas`);
    const offer = required.accepts[0]!;
    assert.equal(offer.scheme, 'credit');
    assert.equal(offer.network, network);
    assert.equal(offer.asset, asset);
    assert.equal(offer.amount, PRICE);
    assert.equal(offer.payTo, m.payoutAddress.toLowerCase());
    assert.equal(offer.extra.merchantId, m.merchantId);
    assert.equal(offer.extra.facilitator, w.baseUrl);
    assert.match(String(offer.extra.orderRef), /^order-[0-9a-f-]{36}$/);
    assert.notEqual(offer.extra.orderRef, other.accepts[0]!.extra.orderRef);
  });

  it('pays with the stock fetch wrapper: 200 with PAYMENT-RESPONSE, CONFIRMED on chain with its PaymentSettled event and booked debt', async function () {
    const scheme = CreditSchemeClient.forAgent(agent, key);
    const before = handlerCalls;
    const res = await payingFetch(scheme)(`${shopUrl}/premium/atlas`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { item: 'atlas', content: 'the premium content' });
    assert.equal(handlerCalls, before + 1);

    const settle = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(settle.success, true);
    assert.equal(settle.network, network);
    assert.equal(settle.payer, b.borrowerId);
    assert.equal(settle.amount, PRICE);
    assert.match(settle.transaction, /^0x[0-9a-f]{64}$/);
    const paymentId = String(settle.extra?.paymentId);
    assert.equal(settle.extra?.status, 'CONFIRMED');

    // The paid request: PAYMENT-SIGNATURE from the reference wrapper, Idempotency-Key from our plug-in.
    assert.equal(sent.length, 2);
    const paid = sent[1]!;
    const payload = decodePaymentSignatureHeader(paid.headers.get('payment-signature')!);
    const voucher = (payload.payload as { voucher: Record<string, unknown> }).voucher;
    assert.equal(payload.accepted.scheme, 'credit');
    assert.equal(voucher.resource, `${shopUrl}/premium/atlas`);
    assert.equal(voucher.amount, PRICE);
    const agentKey = paid.headers.get('idempotency-key');
    assert.ok(agentKey && isUuidV4(agentKey), 'Idempotency-Key from prepare_x402_payment');
    assert.equal(agentKey, scheme.idempotencyKeyFor(String(voucher.voucherId)));

    // Through the facilitator, with the merchant's key.
    const receipt = await call(w, 'GET', `/facilitator/payments/${paymentId}`, { token: m.apiKey });
    assert.equal(receipt.status, 200);
    assert.equal(receipt.json.status, 'CONFIRMED');
    assert.equal(receipt.json.transaction, settle.transaction);
    assert.equal(receipt.json.orderRef, voucher.orderRef);
    const stored = await w.store.c.payments.findOne({ _id: paymentId });
    assert.equal(stored?.idempotencyKey, captureIdempotencyKey(payload), 'captured under the key derived from the voucher');

    const tx = await w.publicClient.getTransactionReceipt({ hash: settle.transaction as `0x${string}` });
    assert.equal(tx.status, 'success');
    const events = tx.logs
      .filter((l) => l.address.toLowerCase() === w.settlement.toLowerCase())
      .flatMap((l) => {
        try {
          return [decodeEventLog({ abi: [paymentSettledEvent], data: l.data, topics: l.topics })];
        } catch {
          return [];
        }
      })
      .filter((e) => e.args.paymentId === uuidToBytes32(paymentId));
    assert.equal(events.length, 1);
    assert.equal(events[0]!.args.borrowerId, uuidToBytes32(b.borrowerId));
    assert.equal(events[0]!.args.merchantId, uuidToBytes32(m.merchantId));
    assert.equal(events[0]!.args.amount, BigInt(PRICE));

    const deadline = Date.now() + 10_000;
    let borrower = await w.store.c.borrowers.findOne({ _id: b.borrowerId });
    while ((borrower?.debt ?? 0) < Number(PRICE) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      borrower = await w.store.c.borrowers.findOne({ _id: b.borrowerId });
    }
    assert.ok((borrower?.debt ?? 0) >= Number(PRICE), `debt booked: ${borrower?.debt}`);
  });

  it('resumes a payment whose settle gave up waiting: the same PAYMENT-SIGNATURE replays the capture and delivers once CONFIRMED', async function () {
    facilitator = new CreditFacilitatorClient({ baseUrl: w.baseUrl, apiKey: m.apiKey, confirmTimeoutMs: 0 });
    const before = handlerCalls;
    const first = await payingFetch(CreditSchemeClient.forAgent(agent, key))(`${shopUrl}/premium/globe`);
    assert.equal(first.status, 402);
    const failed = decodePaymentResponseHeader(first.headers.get('payment-response')!);
    assert.equal(failed.success, false);
    assert.equal(failed.errorReason, 'settlement_timeout');
    const paymentId = String(failed.extra?.paymentId);
    assert.ok(paymentId);

    facilitator = patient();
    const paid = sent.at(-1)!;
    // Our facilitator refuses a captured voucher at verify; the client sees it is its own capture and resumes.
    const paidPayload = decodePaymentSignatureHeader(paid.headers.get('payment-signature')!);
    const verified = await facilitator.verify(paidPayload, paidPayload.accepted);
    assert.deepEqual(verified, { isValid: true, payer: b.borrowerId, extra: { paymentId, resumed: true } });
    const again = await fetch(`${shopUrl}/premium/globe`, {
      headers: { 'payment-signature': paid.headers.get('payment-signature')!, 'idempotency-key': paid.headers.get('idempotency-key')! },
    });
    assert.equal(again.status, 200, await again.clone().text());
    const settle = decodePaymentResponseHeader(again.headers.get('payment-response')!);
    assert.equal(settle.success, true);
    assert.equal(settle.extra?.paymentId, paymentId, 'the same payment, not a second one');
    assert.equal(handlerCalls, before + 2, 'the handler ran for both requests; only the second was delivered');
    assert.equal(await w.store.c.payments.countDocuments({ voucherId: (paidPayload.payload as { voucher: { voucherId: string } }).voucher.voucherId }), 1);
    await pollUntil(w, m, paymentId, 'CONFIRMED');
  });

  it('waitFor "captured" delivers as soon as the capture is queued; the payment still reaches CONFIRMED', async function () {
    facilitator = new CreditFacilitatorClient({ baseUrl: w.baseUrl, apiKey: m.apiKey, waitFor: 'captured' });
    const res = await payingFetch(CreditSchemeClient.forAgent(agent, key))(`${shopUrl}/premium/map`);
    assert.equal(res.status, 200, await res.clone().text());
    const settle = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(settle.success, true);
    assert.ok(['QUEUED', 'SUBMITTED', 'CONFIRMED'].includes(String(settle.extra?.status)), String(settle.extra?.status));
    const done = await pollUntil(w, m, String(settle.extra?.paymentId), 'CONFIRMED');
    assert.match(done.transaction, /^0x[0-9a-f]{64}$/);
  });

  it('captures nothing when the protected handler fails', async function () {
    const res = await payingFetch(CreditSchemeClient.forAgent(agent, key))(`${shopUrl}/broken`);
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('payment-response'), null);
    const payload = decodePaymentSignatureHeader(sent.at(-1)!.headers.get('payment-signature')!);
    const voucher = (payload.payload as { voucher: { voucherId: string } }).voucher;
    assert.equal(await w.store.c.payments.countDocuments({ voucherId: voucher.voucherId }), 0);
  });

  it('refuses to sign when the prepared voucher is not what the merchant asked for (real prepare, tampered amount)', async function () {
    const deps = await agentDeps(w);
    const scheme = new CreditSchemeClient({
      privateKey: key.privateKey,
      operationalAgentId: b.operationalAgentId,
      prepare: async (args) => {
        const prepared = await preparePayment(deps, b.principal, args);
        return { ...prepared, voucher: { ...prepared.voucher, amount: '1' } };
      },
    });
    await assert.rejects(payingFetch(scheme)(`${shopUrl}/premium/atlas`), /Failed to create payment payload: .*voucher amount 1 is not the price/);
    assert.equal(sent.length, 1, 'nothing paid was sent');
  });

  it('refuses to sign above the reference client\'s spend cap, before anything is prepared', async function () {
    let prepared = 0;
    const scheme = new CreditSchemeClient({
      privateKey: key.privateKey,
      operationalAgentId: b.operationalAgentId,
      prepare: async () => {
        prepared += 1;
        return {};
      },
    });
    const client = new x402Client().register(network, scheme);
    client.setSpendControls({ allowedAssets: [{ network, asset, maxAmountPerPayment: '1000' }] });
    await assert.rejects(wrapFetchWithPayment(fetch, client)(`${shopUrl}/premium/atlas`), /spendControls/);
    assert.equal(prepared, 0);
  });
});
