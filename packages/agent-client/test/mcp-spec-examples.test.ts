import assert from 'node:assert/strict';
import { paymentBindingOf, paymentRequiredOf, paymentResponseOf } from '@credit-facilitator/agent-client/mcp-payment-messages';
import { CALL_MARK_KEY, X402McpTransport, type McpTransportLike } from '@credit-facilitator/agent-client/mcp-payment-transport';

// The examples of x402 specs/transports-v2/mcp.md, verbatim (the `@x402/mcp` package is not on the registry).
const SPEC_ACCEPTS = [
  { scheme: 'exact', network: 'eip155:84532', amount: '10000', asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', maxTimeoutSeconds: 60, extra: { name: 'USDC', version: '2' } },
];
const SPEC_REQUIRED = {
  x402Version: 2,
  error: 'Payment required to access this resource',
  resource: { url: 'mcp://tool/financial_analysis', description: 'Advanced financial analysis tool', mimeType: 'application/json' },
  accepts: SPEC_ACCEPTS,
};
const SPEC_TOOL_RESULT = { isError: true, structuredContent: SPEC_REQUIRED, content: [{ type: 'text', text: JSON.stringify(SPEC_REQUIRED) }] };
const SPEC_EXTENSION_RESULT = {
  resultType: 'payment_required',
  paymentRequired: {
    x402Version: 2,
    error: 'Payment required to call financial_analysis',
    resource: { url: 'mcp://api.example.com/tools/financial_analysis', description: 'Advanced financial analysis', mimeType: 'application/json' },
    accepts: [{ ...SPEC_ACCEPTS[0], network: 'eip155:8453', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' }],
    extensions: {},
  },
};
const SPEC_SETTLED = {
  content: [{ type: 'text', text: 'Financial analysis for AAPL: Strong fundamentals with positive outlook...' }],
  _meta: { 'x402/payment-response': { success: true, transaction: '0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef', network: 'eip155:84532', payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66' } },
};

/** An inner transport that records what it sends and lets the test deliver answers. */
function innerTransport() {
  const sent: Record<string, any>[] = [];
  const inner: McpTransportLike & { sent: typeof sent } = {
    sent,
    async start() {},
    async close() {},
    async send(message: Record<string, any>) {
      sent.push(message);
    },
  };
  return inner;
}

describe("agent-client: x402's MCP transport, against the spec's own examples", () => {
  it('tool-result binding: the PaymentRequired of the example, from structuredContent and from content[0].text alone', () => {
    assert.deepEqual(paymentRequiredOf(SPEC_TOOL_RESULT), SPEC_REQUIRED);
    assert.deepEqual(paymentRequiredOf({ isError: true, content: SPEC_TOOL_RESULT.content }), SPEC_REQUIRED);
    assert.equal(paymentBindingOf(SPEC_TOOL_RESULT), 'tool-result');
    assert.equal(paymentBindingOf({ ...SPEC_TOOL_RESULT, resultType: 'complete' }), 'tool-result', 'at 2026-07-28 it carries resultType complete');
  });

  it('extension binding: the payment_required example, its extensions field kept', () => {
    const pr = paymentRequiredOf(SPEC_EXTENSION_RESULT);
    assert.equal(pr?.accepts[0]?.network, 'eip155:8453');
    assert.equal(pr?.resource.url, 'mcp://api.example.com/tools/financial_analysis');
    assert.equal(paymentBindingOf(SPEC_EXTENSION_RESULT), 'extension');
  });

  it('the settlement response example; a successful result asks for no payment', () => {
    assert.deepEqual(paymentResponseOf(SPEC_SETTLED), SPEC_SETTLED._meta['x402/payment-response']);
    assert.equal(paymentRequiredOf(SPEC_SETTLED), null);
    assert.equal(paymentBindingOf(SPEC_SETTLED), null);
  });

  it("X402McpTransport: a marked 2026-07-28 tools/call gets the spec's client capability merged into the SDK's envelope, loses the mark, and its payment_required answer is kept once", async () => {
    const inner = innerTransport();
    const t = new X402McpTransport(inner);
    const delivered: unknown[] = [];
    t.onmessage = (m) => delivered.push(m);
    t.setProtocolVersion('2026-07-28');
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'ExampleClient', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
    };
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'financial_analysis', arguments: {}, _meta: { ...envelope, [CALL_MARK_KEY]: 'm1' } } });
    assert.deepEqual(inner.sent[0]!.params._meta, { ...envelope, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { 'org.x402/payment': {} } } });

    inner.onmessage?.({ jsonrpc: '2.0', id: 2, result: SPEC_EXTENSION_RESULT });
    assert.equal(delivered.length, 1, 'the SDK still gets the answer');
    assert.deepEqual(t.takePaymentRequired('m1'), SPEC_EXTENSION_RESULT);
    assert.equal(t.takePaymentRequired('m1'), undefined);
  });

  it('X402McpTransport: unmarked requests, and marked ones on a 2025 session, go out unchanged (apart from the mark)', async () => {
    const inner = innerTransport();
    const t = new X402McpTransport(inner);
    const own = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } };
    await t.send(own);
    assert.equal(inner.sent[0], own);
    t.setProtocolVersion('2025-11-25');
    await t.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'x', _meta: { [CALL_MARK_KEY]: 'm2' } } });
    assert.deepEqual(inner.sent[1], { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'x' } });
    inner.onmessage?.({ jsonrpc: '2.0', id: 3, result: { isError: true, content: [] } });
    assert.equal(t.takePaymentRequired('m2'), undefined);
  });
});
