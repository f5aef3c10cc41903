import type { ToolCallParams } from '@credit-facilitator/agent-client/paid-mcp';

type Result = Record<string, any>;

/** The per-request capabilities of a client that takes x402's extension binding. */
export const ADVERTISES_PAYMENT = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'org.x402/payment': {} } } };

/**
 * A raw JSON-RPC tools/call at MCP 2026-07-28 (the envelope in `_meta`, Mcp-Method and Mcp-Name
 * headers), returning the result exactly as it came: the wire as the spec writes it, no SDK between.
 */
/** A ToolCaller for PaidMcpClient, typed for reading the results in tests. */
export interface RawCaller {
  callTool(params: ToolCallParams): Promise<Result>;
}

export function rawCaller2026(url: string): RawCaller {
  let id = 0;
  return {
    async callTool(params: ToolCallParams): Promise<Result> {
      const _meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'paying-agent', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
        ...params._meta,
      };
      const res = await fetch(url, {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': params.name },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { ...params, _meta } }),
      });
      const json = (await res.json()) as { result?: Result; error?: unknown };
      if (!json.result) throw new Error(`tools/call failed: ${JSON.stringify(json)}`);
      return json.result;
    },
  };
}
