import { PaymentRequiredSchema, SettleResponseSchema, type PaymentRequiredMessage, type SettleResponseMessage } from './x402-messages.js';

/** x402's MCP transport keys (x402 specs/transports-v2/mcp.md). */
export const PAYMENT_META_KEY = 'x402/payment';
export const PAYMENT_RESPONSE_META_KEY = 'x402/payment-response';
export const PAYMENT_EXTENSION = 'org.x402/payment';

type ResultLike = Record<string, unknown>;

const record = (v: unknown): ResultLike | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as ResultLike) : undefined);

function firstTextJson(content: unknown): unknown {
  if (!Array.isArray(content)) return undefined;
  const first = record(content[0]);
  if (first?.type !== 'text' || typeof first.text !== 'string') return undefined;
  try {
    return JSON.parse(first.text);
  } catch {
    return undefined;
  }
}

/**
 * The PaymentRequired a tools/call result carries, in either binding: the extension binding's
 * `resultType: "payment_required"` with `paymentRequired`, or the tool-result binding's error result
 * (structuredContent first, then content[0].text). Null when the result asks for no payment.
 */
export function paymentRequiredOf(result: unknown): PaymentRequiredMessage | null {
  const r = record(result);
  if (!r) return null;
  if (r.resultType === 'payment_required') {
    const parsed = PaymentRequiredSchema.safeParse(r.paymentRequired);
    return parsed.success ? parsed.data : null;
  }
  if (r.isError !== true) return null;
  for (const candidate of [r.structuredContent, firstTextJson(r.content)]) {
    const parsed = PaymentRequiredSchema.safeParse(candidate);
    if (parsed.success) return parsed.data;
  }
  return null;
}

/** Which of x402's bindings asked for payment: `resultType: "payment_required"` is the extension binding, an error result the tool-result binding. */
export type PaymentBinding = 'extension' | 'tool-result';

export function paymentBindingOf(result: unknown): PaymentBinding | null {
  if (!paymentRequiredOf(result)) return null;
  return record(result)?.resultType === 'payment_required' ? 'extension' : 'tool-result';
}

/** `result._meta["x402/payment-response"]`; null when absent or malformed. */
export function paymentResponseOf(result: unknown): SettleResponseMessage | null {
  const parsed = SettleResponseSchema.safeParse(record(record(result)?._meta)?.[PAYMENT_RESPONSE_META_KEY]);
  return parsed.success ? parsed.data : null;
}

/** The error code of a plain tool error result (`structuredContent.error.code`), if any. */
export function toolErrorCodeOf(result: unknown): string | undefined {
  const r = record(result);
  if (r?.isError !== true) return undefined;
  const code = record(record(r.structuredContent)?.error)?.code;
  return typeof code === 'string' ? code : undefined;
}
