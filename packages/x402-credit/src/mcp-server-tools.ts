import { envelopeOf } from './mcp-meta.js';
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
  lifted: Record<string, unknown> | undefined;
}

const asRecord = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** The request's `_meta` and envelope from either SDK's handler context (v1: `extra._meta`; v2: `ctx.mcpReq._meta` and `ctx.mcpReq.envelope`). */
function requestView(extra: unknown): RequestView {
  const e = asRecord(extra);
  const mcpReq = asRecord(e?.mcpReq);
  if (mcpReq) return { meta: asRecord(mcpReq._meta), lifted: asRecord(mcpReq.envelope) };
  return { meta: asRecord(e?._meta), lifted: undefined };
}

/**
 * Registers `name` on `server` behind the paywall: unpaid calls get PaymentRequired (the
 * tool-result binding, or the extension binding on a 2026-07-28 request that advertises
 * org.x402/payment), paid ones run `handler` once the payment is captured or CONFIRMED, and carry
 * the receipt in `_meta["x402/payment-response"]`.
 */
export function registerPaidTool<A = Record<string, unknown>, X = unknown>(server: ToolRegistry, paywall: McpPaywall, name: string, config: PaidToolConfig, handler: PaidToolHandler<A, X>): unknown {
  const { price, runAfter, mimeType, ...toolConfig } = config;
  const toolPrice: ToolPrice = { price, ...(runAfter ? { runAfter } : {}), ...(mimeType ? { mimeType } : {}), ...(config.description ? { description: config.description } : {}) };
  const serve = (args: unknown, extra: unknown) => {
    const view = requestView(extra);
    return paywall.handle({ tool: name, args, meta: view.meta, envelope: envelopeOf(view.meta, view.lifted) }, toolPrice, () => handler(args as A, extra as X));
  };
  // Both SDKs call a tool without an input schema with the context alone.
  const callback = config.inputSchema === undefined ? (extra: unknown) => serve({}, extra) : (args: unknown, extra: unknown) => serve(args, extra);
  return server.registerTool(name, toolConfig, callback);
}
