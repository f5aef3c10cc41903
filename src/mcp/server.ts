import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerTool, type ToolRuntime } from './tools/define.js';
import { TOOLS } from './tools/index.js';

export const SERVER_INFO = { name: 'credit-facilitator', version: '0.1.0' };

export const INSTRUCTIONS =
  'Credit for x402 payments on behalf of a borrower. Onboarding: register_borrower -> accept_credit_facility -> register_agent_key -> ' +
  'claim_handle (each step unlocks the next scopes; refresh the token after each). Then prepare_x402_payment for every 402 answer, ' +
  'and execute_repayment to repay. Steps that need the borrower return a signing_url for their own wallet; never ask for a seed or private key.';

/** A fresh server per HTTP request (stateless Streamable HTTP), with the eight tools bound to this request's runtime. */
export function createMcpServer(rt: ToolRuntime): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  for (const def of TOOLS) registerTool(server, def, rt);
  closeToolPrototypeLookup(server);
  return server;
}

/**
 * The SDK looks a called tool up with `registeredTools[name]` on a plain object, so a call to
 * `valueOf`, `constructor` or `__proto__` finds an Object.prototype member and answers
 * "Tool valueOf disabled" instead of "not found". Cutting the registry's prototype makes every
 * name that is not one of ours unknown (test/unit/mcp-server-tool-names.test.ts pins it).
 */
function closeToolPrototypeLookup(server: McpServer): void {
  const registry = (server as unknown as { _registeredTools?: unknown })._registeredTools;
  if (typeof registry === 'object' && registry !== null) Object.setPrototypeOf(registry, null);
}
