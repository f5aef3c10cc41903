/** `@credit-facilitator/x402-credit/mcp`: paid MCP tools on credit (x402's MCP transport), server side. */
export { McpPaywall, type McpPaywallOptions, type PaidCall, type PaywallFacilitator, type RunAfter, type ToolPrice } from './mcp-paywall.js';
export { advertisePaymentExtension, PAYMENT_EXTENSION_CAPABILITY, registerPaidTool, type PaidToolConfig, type PaidToolHandler, type ToolRegistry } from './mcp-server-tools.js';
export { paymentRequiredResult, paidResult, errorResult, type McpToolResult } from './mcp-results.js';
export {
  PAYMENT_EXTENSION,
  PAYMENT_META_KEY,
  PAYMENT_RESPONSE_META_KEY,
  RESULT_TYPE_REVISION,
  McpPaymentPayloadSchema,
  envelopeOf,
  paymentFromMeta,
  usesExtensionBinding,
  type McpPaymentPayload,
  type RequestEnvelope,
} from './mcp-meta.js';
export { callDigest, orderRefForCall, orderRefMatchesCall } from './mcp-order-ref.js';
