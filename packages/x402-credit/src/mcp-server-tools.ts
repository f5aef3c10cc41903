import { envelopeOf, PAYMENT_EXTENSION, type RequestEnvelope } from './mcp-meta.js';
import type { McpPaywall, ToolPrice } from './mcp-paywall.js';
import type { McpToolResult } from './mcp-results.js';

/**
 * What registering a tool needs of an McpServer: `registerTool(name, config, callback)` on both
 * `@modelcontextprotocol/sdk` 1.x and `@modelcontextprotocol/server` 2.x. Typed loosely on purpose
 * so this package depends on neither.
 */
export interface ToolRegistry {
  registerTool(name: string, config: any, callback: (...args: any[]) => unknown): unknown;
}

export interface PaidToolConfig extends ToolPrice {
  title?: string;
  /** The tool's input schema, as the SDK you register with takes it (zod shape or schema). */
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** The tool itself: runs only once its call is paid. `extra` is the SDK's own (v1 RequestHandlerExtra, v2 ServerContext). */
export type PaidToolHandler<A = Record<string, unknown>, X = unknown> = (args: A, extra: X) => McpToolResult | Promise<McpToolResult>;

interface RequestView {
  meta: Record<string, unknown> | undefined;
  envelope: RequestEnvelope;
}

/** No per-request envelope: a revision before 2026-07-28, so only the tool-result binding. */
const NO_ENVELOPE: RequestEnvelope = { advertisesPaymentExtension: false };

const asRecord = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/**
 * The request's `_meta` and envelope from either SDK's handler context. v2: `ctx.mcpReq._meta`,
 * and the envelope the SDK lifted off a 2026-07-28 request (`ctx.mcpReq.envelope`). v1: `extra._meta`
 * only; the v1 SDK serves revisions up to 2025-11-25, so envelope keys a client put in `_meta` there
 * claim a revision the session is not on and never select the extension binding.
 */
function requestView(extra: unknown): RequestView {
  const e = asRecord(extra);
  const mcpReq = asRecord(e?.mcpReq);
  if (mcpReq) {
    const lifted = asRecord(mcpReq.envelope);
    return { meta: asRecord(mcpReq._meta), envelope: lifted ? envelopeOf(lifted) : NO_ENVELOPE };
  }
  return { meta: asRecord(e?._meta), envelope: NO_ENVELOPE };
}

/** The server capability of x402's extension binding, as `server/discover` answers it. */
export const PAYMENT_EXTENSION_CAPABILITY = { extensions: { [PAYMENT_EXTENSION]: {} } } as const;

interface CapabilityHolder {
  server?: { registerCapabilities?: (c: Record<string, unknown>) => void; getNegotiatedProtocolVersion?: unknown };
}

/**
 * Declares `org.x402/payment` in the server's capabilities (answered in `server/discover`), on a
 * `@modelcontextprotocol/server` 2.x McpServer that is not connected yet. A v1 McpServer (no
 * 2026-07-28, so no extension binding) is left as it is. Returns whether it declared it.
 */
export function advertisePaymentExtension(server: unknown): boolean {
  const inner = (server as CapabilityHolder | undefined)?.server;
  // Only the v2 Server negotiates 2026-07-28 revisions.
  if (typeof inner?.registerCapabilities !== 'function' || typeof inner.getNegotiatedProtocolVersion !== 'function') return false;
  try {
    inner.registerCapabilities(PAYMENT_EXTENSION_CAPABILITY);
    return true;
  } catch {
    // Already connected: capabilities are fixed; declare it before connecting (the tools still answer both bindings).
    return false;
  }
}

/**
 * Registers `name` on `server` behind the paywall: unpaid calls get PaymentRequired (the
 * tool-result binding, or the extension binding on a 2026-07-28 request that advertises
 * org.x402/payment; a v2 server also declares org.x402/payment in server/discover), paid ones run `handler` once the payment is captured or CONFIRMED, and carry
 * the receipt in `_meta["x402/payment-response"]`.
 */
export function registerPaidTool<A = Record<string, unknown>, X = unknown>(server: ToolRegistry, paywall: McpPaywall, name: string, config: PaidToolConfig, handler: PaidToolHandler<A, X>): unknown {
  const { price, runAfter, mimeType, ...toolConfig } = config;
  const toolPrice: ToolPrice = { price, ...(runAfter ? { runAfter } : {}), ...(mimeType ? { mimeType } : {}), ...(config.description ? { description: config.description } : {}) };
  const serve = (args: unknown, extra: unknown) => {
    const view = requestView(extra);
    return paywall.handle({ tool: name, args, meta: view.meta, envelope: view.envelope }, toolPrice, () => handler(args as A, extra as X));
  };
  advertisePaymentExtension(server);
  // Both SDKs call a tool without an input schema with the context alone.
  const callback = config.inputSchema === undefined ? (extra: unknown) => serve({}, extra) : (args: unknown, extra: unknown) => serve(args, extra);
  return server.registerTool(name, toolConfig, callback);
}
