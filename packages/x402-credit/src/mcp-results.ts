import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { hasResultTypes, PAYMENT_RESPONSE_META_KEY, usesExtensionBinding, type RequestEnvelope } from './mcp-meta.js';

/** A tools/call result as both SDK generations accept it from a handler (their own types are stricter per generation). */
export interface McpToolResult {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  resultType?: string;
  paymentRequired?: PaymentRequired;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

const withResponse = (result: McpToolResult, response: SettleResponse | undefined): McpToolResult =>
  response ? { ...result, _meta: { ...result._meta, [PAYMENT_RESPONSE_META_KEY]: response } } : result;

/**
 * "Payment required", in the binding the request allows: the extension binding's
 * `resultType: "payment_required"` when it advertises org.x402/payment on 2026-07-28+, else the
 * tool-result binding (isError, the PaymentRequired in structuredContent and as content[0].text).
 */
export function paymentRequiredResult(required: PaymentRequired, envelope: RequestEnvelope, response?: SettleResponse): McpToolResult {
  if (usesExtensionBinding(envelope)) return withResponse({ resultType: 'payment_required', paymentRequired: required }, response);
  const result: McpToolResult = {
    isError: true,
    structuredContent: required as unknown as Record<string, unknown>,
    content: [{ type: 'text', text: JSON.stringify(required) }],
    ...(hasResultTypes(envelope) ? { resultType: 'complete' } : {}),
  };
  return withResponse(result, response);
}

/** The tool's own result with the settlement response added to its `_meta`. */
export function paidResult(result: McpToolResult, response: SettleResponse, envelope: RequestEnvelope): McpToolResult {
  return withResponse(hasResultTypes(envelope) && result.resultType === undefined ? { ...result, resultType: 'complete' } : result, response);
}

/** A failure that is not the payment's (facilitator unreachable or busy, the tool threw): a plain tool error. */
export function errorResult(code: string, message: string, envelope: RequestEnvelope, response?: SettleResponse): McpToolResult {
  const error = { code, message };
  return withResponse(
    { isError: true, structuredContent: { error }, content: [{ type: 'text', text: JSON.stringify({ error }) }], ...(hasResultTypes(envelope) ? { resultType: 'complete' } : {}) },
    response,
  );
}
