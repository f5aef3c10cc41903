import assert from 'node:assert/strict';
import { ToolError } from '../../src/domain/tool-errors.js';
import type { AppDeps } from '../../src/main/app-deps.js';
import { preparePayment } from '../../src/agents/prepare-payment.js';
import { mcpUrl } from '../../src/config/env.js';
import type { TestBorrower, World } from './world.js';

/** One prepare_x402_payment outcome, from either path: the intent it held, or the tool error. */
export interface Prepared {
  spendIntentId?: string;
  error?: { code: string; reason?: string; message?: string };
}

/** prepare_x402_payment in the test process, through the agent service itself. */
export async function prepareInProcess(deps: AppDeps, b: TestBorrower, header: string, orderRef: string): Promise<Prepared> {
  try {
    return { spendIntentId: (await preparePayment(deps, b.principal, { payment_required: header, order_ref: orderRef })).spend_intent_id };
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    return { error: { code: err.code, message: err.message, ...(typeof err.details.reason === 'string' ? { reason: err.details.reason } : {}) } };
  }
}

/** prepare_x402_payment in the API process, as an agent calls it: a JSON-RPC tools/call on /mcp with a borrower token. */
export async function prepareOverMcp(w: World, token: string, header: string, orderRef: string): Promise<Prepared> {
  const res = await fetch(mcpUrl(w.cli.env), {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'prepare_x402_payment', arguments: { payment_required: header, order_ref: orderRef } } }),
  });
  const body = (await res.json()) as { result?: { isError?: boolean; structuredContent?: { spend_intent_id: string }; content: { text: string }[] } };
  assert.ok(body.result, `MCP answered ${res.status} ${JSON.stringify(body)}`);
  if (!body.result.isError) return { spendIntentId: body.result.structuredContent?.spend_intent_id as string };
  return { error: (JSON.parse(body.result.content[0]!.text) as { error: Prepared['error'] }).error };
}

