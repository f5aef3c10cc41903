import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpHandler, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { PaymentPayload, PaymentRequirements, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { SAMPLE, sampleVoucher } from '@credit-facilitator/wire/testing';
import type { Voucher } from '@credit-facilitator/wire/voucher';
import type { CaptureOutcome, Receipt } from '@credit-facilitator/x402-credit/facilitator-mapping';
import { captureIdempotencyKey } from '@credit-facilitator/x402-credit/facilitator-mapping';
import { McpPaywall, registerPaidTool, type PaywallFacilitator, type RunAfter } from '@credit-facilitator/x402-credit/mcp';

const NETWORK = 'eip155:84532';
const receipt = (v: Voucher, status: Receipt['status']): Receipt => ({
  paymentId: '99999999-9999-4999-8999-999999999999',
  status,
  merchantId: v.merchantId,
  payer: v.borrowerId,
  amount: v.amount,
  asset: v.asset,
  network: v.network,
  orderRef: v.orderRef,
  capturedAt: '2026-01-01T00:00:00.000Z',
  ...(status === 'CONFIRMED' ? { transaction: `0x${'cd'.repeat(32)}`, blockNumber: '7', batchId: '88888888-8888-4888-8888-888888888888' } : {}),
});

/** A facilitator in memory: verify refuses expired vouchers; capture replays per derived key; settles to `final`. */
function fakeFacilitator(final: Receipt['status'] = 'CONFIRMED') {
  const captures = new Map<string, number>();
  const seen: { verify: PaymentRequirements[]; capture: PaymentRequirements[] } = { verify: [], capture: [] };
  const f: PaywallFacilitator = {
    baseUrl: 'http://facilitator.test/api/v1',
    getSupported: async (): Promise<SupportedResponse> => ({ kinds: [{ x402Version: 2, scheme: 'credit', network: NETWORK, extra: { asset: SAMPLE.asset, decimals: 6 } }], extensions: [], signers: {} }),
    verify: async (p: PaymentPayload, r: PaymentRequirements): Promise<VerifyResponse> => {
      seen.verify.push(r);
      const v = (p.payload as { voucher: Voucher }).voucher;
      return v.expiresAt < Date.now() / 1000 ? { isValid: false, invalidReason: 'voucher_expired' } : { isValid: true, payer: v.borrowerId };
    },
    capture: async (p: PaymentPayload, r: PaymentRequirements): Promise<CaptureOutcome> => {
      seen.capture.push(r);
      const key = captureIdempotencyKey(p);
      captures.set(key, (captures.get(key) ?? 0) + 1);
      return { kind: 'captured', receipt: receipt((p.payload as { voucher: Voucher }).voucher, 'QUEUED'), replayed: captures.get(key)! > 1 };
    },
    waitForSettlement: async (first: Receipt) => ({ ...receipt({ ...sampleVoucher(), amount: first.amount, orderRef: first.orderRef }, final), paymentId: first.paymentId }),
  };
  return { f, captures, seen };
}

function paywall(f: PaywallFacilitator, runAfter: RunAfter = 'confirmed') {
  return new McpPaywall({ facilitator: f, merchantId: SAMPLE.merchantId, payTo: SAMPLE.payTo, runAfter });
}

/** A PaymentPayload for the PaymentRequired's offer, as if prepared and signed (the fake facilitator does not check the signature). */
function pay(required: { resource: { url: string }; accepts: PaymentRequirements[] }, patch: Partial<Voucher> = {}) {
  const a = required.accepts[0]!;
  const voucher = sampleVoucher({ amount: a.amount, resource: required.resource.url, orderRef: String(a.extra.orderRef), expiresAt: Math.floor(Date.now() / 1000) + 300, ...patch });
  return { x402Version: 2, resource: required.resource, accepted: a, payload: { voucher, signature: 'A'.repeat(86) } };
}

async function v1Pair(pw: McpPaywall, calls: string[]) {
  const server = new McpServer({ name: 'paid', version: '1' });
  registerPaidTool(server, pw, 'forecast', { description: 'A forecast', price: '$0.25', inputSchema: z.object({ city: z.string() }) }, async ({ city }: { city: string }) => {
    calls.push(city);
    return { content: [{ type: 'text', text: `sunny in ${city}` }] };
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 't', version: '1' });
  await Promise.all([server.connect(b), client.connect(a)]);
  return client;
}

describe('x402-credit/mcp: paid tools (McpPaywall, registerPaidTool)', () => {
  it('v1 McpServer: an unpaid call gets the tool-result binding; the paid retry runs once CONFIRMED and returns the receipt; a retry does not pay twice', async () => {
    const { f, captures } = fakeFacilitator();
    const calls: string[] = [];
    const client = await v1Pair(paywall(f), calls);
    const first = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
    assert.equal(first.isError, true);
    const required = first.structuredContent as { x402Version: number; error: string; resource: { url: string }; accepts: PaymentRequirements[] };
    assert.equal(required.x402Version, 2);
    assert.equal(required.resource.url, 'mcp://tool/forecast');
    assert.deepEqual(JSON.parse((first.content as { text: string }[])[0]!.text), required);
    assert.equal(required.accepts[0]!.amount, '250000');
    assert.equal(required.accepts[0]!.extra.merchantId, SAMPLE.merchantId);
    assert.match(String(required.accepts[0]!.extra.orderRef), /^mcp\.[0-9a-f]{32}\./);
    assert.equal('resultType' in first, false);
    assert.deepEqual(calls, []);

    const payment = pay(required);
    const paid = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'x402/payment': payment } });
    assert.equal(paid.isError, undefined);
    assert.deepEqual(paid.content, [{ type: 'text', text: 'sunny in Oslo' }]);
    const response = paid._meta?.['x402/payment-response'] as { success: boolean; transaction: string; extra: { status: string } };
    assert.equal(response.success, true);
    assert.equal(response.extra.status, 'CONFIRMED');
    assert.match(response.transaction, /^0x/);

    const again = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'x402/payment': payment } });
    assert.equal(again.isError, undefined);
    assert.deepEqual([...captures.values()], [2], 'the same capture key both times: the facilitator replays');
    assert.deepEqual(calls, ['Oslo', 'Oslo']);
  });

  it('refuses before charging: other arguments, wrong amount, wrong payee, malformed payment, expired voucher (verify)', async () => {
    const { f, captures } = fakeFacilitator();
    const calls: string[] = [];
    const client = await v1Pair(paywall(f), calls);
    const required = (await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } })).structuredContent as never as { resource: { url: string }; accepts: PaymentRequirements[] };
    const refused = async (args: Record<string, unknown>, payment: unknown, reason: RegExp) => {
      const r = await client.callTool({ name: 'forecast', arguments: args, _meta: { 'x402/payment': payment } });
      assert.equal(r.isError, true);
      assert.match(String((r.structuredContent as { error: string }).error), reason);
      assert.equal((r.structuredContent as { accepts: unknown[] }).accepts.length, 1, 'a fresh PaymentRequired');
    };
    await refused({ city: 'Bergen' }, pay(required), /^call_mismatch/);
    await refused({ city: 'Oslo' }, pay(required, { amount: '1' }), /^amount_mismatch/);
    await refused({ city: 'Oslo' }, pay(required, { payTo: '0x00000000000000000000000000000000000000ee' }), /^recipient_mismatch/);
    await refused({ city: 'Oslo' }, { x402Version: 2, payload: 'nope' }, /^invalid_payment/);
    await refused({ city: 'Oslo' }, pay(required, { expiresAt: 1_700_000_300 }), /^voucher_expired/);
    assert.equal(captures.size, 0);
    assert.deepEqual(calls, []);
  });

  it('no tool content when settlement fails; runAfter captured runs on the accepted capture', async () => {
    const failing = fakeFacilitator('FAILED');
    const calls: string[] = [];
    const client = await v1Pair(paywall(failing.f), calls);
    const required = (await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } })).structuredContent as never as { resource: { url: string }; accepts: PaymentRequirements[] };
    const r = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'x402/payment': pay(required) } });
    assert.equal(r.isError, true);
    assert.match(String((r.structuredContent as { error: string }).error), /^settlement_failed/);
    assert.equal((r._meta?.['x402/payment-response'] as { success: boolean }).success, false);
    assert.deepEqual(calls, []);

    const quick = fakeFacilitator('FAILED');
    const client2 = await v1Pair(paywall(quick.f, 'captured'), calls);
    const required2 = (await client2.callTool({ name: 'forecast', arguments: { city: 'Rome' } })).structuredContent as never as { resource: { url: string }; accepts: PaymentRequirements[] };
    const r2 = await client2.callTool({ name: 'forecast', arguments: { city: 'Rome' }, _meta: { 'x402/payment': pay(required2) } });
    assert.equal(r2.isError, undefined);
    assert.equal((r2._meta?.['x402/payment-response'] as { extra: { status: string } }).extra.status, 'QUEUED');
    assert.deepEqual(calls, ['Rome']);
  });

  it('v2 McpServer on 2026-07-28: the extension binding when the request advertises org.x402/payment, else tool-result with resultType complete', async () => {
    const { f } = fakeFacilitator();
    const pw = paywall(f);
    const calls: string[] = [];
    const post = async (params: Record<string, unknown>, extensions: Record<string, unknown> | undefined) => {
      const handler = createMcpHandler(() => {
        const s = new McpServerV2({ name: 'paid', version: '1' });
        registerPaidTool(s, pw, 'forecast', { description: 'A forecast', price: '$0.25', inputSchema: z.object({ city: z.string() }) }, async ({ city }: { city: string }) => {
          calls.push(city);
          return { content: [{ type: 'text' as const, text: `sunny in ${city}` }] };
        });
        return s;
      }, { legacy: 'reject' });
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'unit', version: '0' },
        'io.modelcontextprotocol/clientCapabilities': extensions ? { extensions } : {},
        ...(params._meta as object),
      };
      const req = new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'forecast' },
      });
      try {
        const res = await handler.fetch(req, { parsedBody: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: meta } } });
        return (await res.json()) as { result: Record<string, any>; error?: unknown };
      } finally {
        await handler.close();
      }
    };
    const ext = await post({ name: 'forecast', arguments: { city: 'Oslo' } }, { 'org.x402/payment': {} });
    assert.equal(ext.result?.resultType, 'payment_required', JSON.stringify(ext));
    assert.equal(ext.result.paymentRequired.x402Version, 2);
    const plain = await post({ name: 'forecast', arguments: { city: 'Oslo' } }, undefined);
    assert.equal(plain.result?.resultType, 'complete', JSON.stringify(plain));
    assert.equal(plain.result.isError, true);
    assert.equal(plain.result.structuredContent.x402Version, 2);
    const paid = await post({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'x402/payment': pay(ext.result.paymentRequired) } }, { 'org.x402/payment': {} });
    assert.equal(paid.result?.resultType, 'complete', JSON.stringify(paid));
    assert.deepEqual(paid.result.content, [{ type: 'text', text: 'sunny in Oslo' }]);
    assert.equal(paid.result._meta['x402/payment-response'].success, true);
    assert.deepEqual(calls, ['Oslo']);
  });
});
