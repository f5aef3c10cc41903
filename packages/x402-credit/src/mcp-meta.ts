import { z } from 'zod';

/**
 * The x402 MCP transport's `_meta` keys and what a server reads from an incoming request
 * (x402 specs/transports-v2/mcp.md). Everything here arrives from the client: validate, never trust.
 */
export const PAYMENT_META_KEY = 'x402/payment';
export const PAYMENT_RESPONSE_META_KEY = 'x402/payment-response';
export const PAYMENT_EXTENSION = 'org.x402/payment';
/** The first MCP revision with result types (and so with the extension binding). */
export const RESULT_TYPE_REVISION = '2026-07-28';

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** A `credit` PaymentPayload as it travels in `params._meta["x402/payment"]`. */
export const McpPaymentPayloadSchema = z.looseObject({
  x402Version: z.literal(2),
  resource: z.looseObject({ url: z.string().min(1).max(2048) }).optional(),
  accepted: z.looseObject({
    scheme: z.string().min(1),
    network: z.string().min(1),
    amount: z.string().min(1),
    asset: z.string().min(1),
    payTo: z.string().min(1),
    maxTimeoutSeconds: z.number().int().nonnegative(),
    extra: z.record(z.string(), z.unknown()).default({}),
  }),
  payload: z.looseObject({ voucher: z.record(z.string(), z.unknown()), signature: z.string().min(1).max(200) }),
});
export type McpPaymentPayload = z.infer<typeof McpPaymentPayloadSchema>;

const EnvelopeSchema = z.looseObject({
  [PROTOCOL_VERSION_KEY]: z.string().optional(),
  [CLIENT_CAPABILITIES_KEY]: z.looseObject({ extensions: z.record(z.string(), z.unknown()).optional() }).optional(),
});

export type PaymentInMeta = { kind: 'none' } | { kind: 'invalid'; detail: string } | { kind: 'payment'; payload: McpPaymentPayload };

/** `params._meta["x402/payment"]`: absent, malformed, or a PaymentPayload. */
export function paymentFromMeta(meta: Record<string, unknown> | undefined): PaymentInMeta {
  const raw = meta?.[PAYMENT_META_KEY];
  if (raw === undefined || raw === null) return { kind: 'none' };
  const parsed = McpPaymentPayloadSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { kind: 'invalid', detail: `${PAYMENT_META_KEY}${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message ?? 'invalid'}` };
  }
  return { kind: 'payment', payload: parsed.data };
}

/** What the request says about its protocol revision and whether it can take the extension binding. */
export interface RequestEnvelope {
  protocolVersion?: string;
  advertisesPaymentExtension: boolean;
}

/**
 * Reads the per-request envelope. The v1 SDK leaves those keys in `_meta`; the v2 SDK lifts them
 * into `ctx.mcpReq.envelope`: pass both, the lifted one wins.
 */
export function envelopeOf(...sources: (Record<string, unknown> | undefined)[]): RequestEnvelope {
  let protocolVersion: string | undefined;
  let advertises = false;
  for (const source of sources) {
    const e = EnvelopeSchema.safeParse(source ?? {});
    if (!e.success) continue;
    protocolVersion = e.data[PROTOCOL_VERSION_KEY] ?? protocolVersion;
    const caps = e.data[CLIENT_CAPABILITIES_KEY];
    if (caps) advertises = caps.extensions?.[PAYMENT_EXTENSION] !== undefined;
  }
  return { ...(protocolVersion !== undefined ? { protocolVersion } : {}), advertisesPaymentExtension: advertises };
}

/** Revisions are dates (YYYY-MM-DD), so they order as strings. */
export const hasResultTypes = (e: RequestEnvelope): boolean => e.protocolVersion !== undefined && e.protocolVersion >= RESULT_TYPE_REVISION;

/** The extension binding is only for a 2026-07-28+ request that advertises it (the spec's MUST NOT otherwise). */
export const usesExtensionBinding = (e: RequestEnvelope): boolean => hasResultTypes(e) && e.advertisesPaymentExtension;
