import assert from 'node:assert/strict';
import { BudgetExceededError, McpBudget } from '@credit-facilitator/agent-client/mcp-budget';
import { paymentRequiredOf, paymentResponseOf } from '@credit-facilitator/agent-client/mcp-payment-messages';

const required = {
  x402Version: 2,
  error: 'Payment required to call forecast',
  resource: { url: 'mcp://tool/forecast' },
  accepts: [{ scheme: 'credit', network: 'eip155:84532', asset: '0xbb', amount: '250000', payTo: '0xaa', maxTimeoutSeconds: 300, extra: { orderRef: 'mcp.x.y' } }],
};

describe('agent-client: paid MCP answers and budget', () => {
  it('reads PaymentRequired from either binding: extension, structuredContent, then content[0].text', () => {
    assert.equal(paymentRequiredOf({ resultType: 'payment_required', paymentRequired: required })?.accepts[0]?.amount, '250000');
    assert.equal(paymentRequiredOf({ isError: true, structuredContent: required, content: [] })?.resource.url, 'mcp://tool/forecast');
    assert.equal(paymentRequiredOf({ isError: true, content: [{ type: 'text', text: JSON.stringify(required) }] })?.x402Version, 2);
    assert.equal(paymentRequiredOf({ structuredContent: required, content: [] }), null, 'not an error result: no payment asked');
    assert.equal(paymentRequiredOf({ isError: true, content: [{ type: 'text', text: 'boom' }] }), null);
  });

  it('reads the settlement response from result._meta, null when malformed', () => {
    assert.equal(paymentResponseOf({ _meta: { 'x402/payment-response': { success: true, transaction: '0x1', network: 'eip155:84532' } } })?.success, true);
    assert.equal(paymentResponseOf({ _meta: { 'x402/payment-response': { success: 'yes' } } }), null);
    assert.equal(paymentResponseOf({}), null);
  });

  it('budget: per-call and total limits; a release gives the amount back', () => {
    const b = new McpBudget({ maxPerCall: '100', maxTotal: '150' });
    assert.throws(() => b.reserve('101'), (e: unknown) => e instanceof BudgetExceededError && e.code === 'over_per_call');
    b.reserve('100');
    assert.throws(() => b.reserve('60'), (e: unknown) => e instanceof BudgetExceededError && e.code === 'over_total');
    b.release('100');
    b.reserve('60');
    assert.equal(b.spent, '60');
  });
});
