import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpHandler, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { CreditFacilitatorClient, type ClientLogger } from '@credit-facilitator/x402-credit';
import { McpPaywall, registerPaidTool } from '@credit-facilitator/x402-credit/mcp';

/** An MCP server selling tool calls on credit (x402's MCP transport): one tool runs once paid and CONFIRMED, one once captured, one is free. */
export interface PaidMcpServerConfig {
  /** The facilitator's {base_url}, ending in /api/v1. */
  facilitatorUrl: string;
  apiKey: string;
  merchantId: string;
  payTo: string;
  /** USD per forecast call, e.g. "$0.25". */
  forecastPrice?: string;
  /** USD per quote call (runs on capture, before CONFIRMED). */
  quotePrice?: string;
  host?: string;
  port?: number;
  logger?: ClientLogger;
}

export interface PaidMcpServer {
  /** The MCP endpoint. */
  url: string;
  /** The same tools on `@modelcontextprotocol/server` 2.x at MCP 2026-07-28 (stateless), where the extension binding applies. */
  url2026: string;
  /** Paid tool runs, by tool, for tests and logs. */
  runs: { forecast: number; quote: number };
  close(): Promise<void>;
}

/** The tools, on an McpServer of either SDK generation (registerPaidTool takes both). */
function tools<S extends McpServer | McpServerV2>(server: S, paywall: McpPaywall, runs: PaidMcpServer['runs'], c: PaidMcpServerConfig): S {
  registerPaidTool(
    server,
    paywall,
    'forecast',
    { description: 'A seven-day forecast for a city', price: c.forecastPrice ?? '$0.25', runAfter: 'confirmed', inputSchema: z.object({ city: z.string().min(1).max(100) }) },
    async ({ city }: { city: string }) => {
      runs.forecast += 1;
      const forecast = { city, days: ['sun', 'sun', 'rain', 'cloud', 'sun', 'wind', 'sun'] };
      return { content: [{ type: 'text', text: JSON.stringify(forecast) }], structuredContent: forecast };
    },
  );
  registerPaidTool(
    server,
    paywall,
    'quote',
    { description: 'A price quote; runs as soon as the payment is captured', price: c.quotePrice ?? '$0.05', runAfter: 'captured', inputSchema: z.object({ symbol: z.string().min(1).max(12) }) },
    async ({ symbol }: { symbol: string }) => {
      runs.quote += 1;
      return { content: [{ type: 'text', text: `${symbol}: 42.00` }] };
    },
  );
  (server as McpServer).registerTool('ping', { description: 'Free' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
  return server;
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

export async function startPaidMcpServer(c: PaidMcpServerConfig): Promise<PaidMcpServer> {
  const facilitator = new CreditFacilitatorClient({ baseUrl: c.facilitatorUrl, apiKey: c.apiKey, merchantId: c.merchantId, pollIntervalMs: 200, confirmTimeoutMs: 120_000, ...(c.logger ? { logger: c.logger } : {}) });
  const paywall = new McpPaywall({ facilitator, merchantId: c.merchantId, payTo: c.payTo, ...(c.logger ? { logger: c.logger } : {}) });
  await paywall.initialize();
  const runs = { forecast: 0, quote: 0 };

  const modern = createMcpHandler(() => tools(new McpServerV2({ name: 'paid-mcp-example', version: '1.0.0' }), paywall, runs, c), { legacy: 'reject' });
  const serve2026 = async (req: IncomingMessage, res: ServerResponse) => {
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const parsedBody = req.method === 'POST' ? await body(req) : undefined;
    const answer = await modern.fetch(new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers }), { parsedBody });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  };

  // Stateless Streamable HTTP: a server and transport per request, as the SDK's stateless example does.
  const http: Server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/mcp/2026') return serve2026(req, res);
      if (path !== '/mcp') return void res.writeHead(404).end();
      const server = tools(new McpServer({ name: 'paid-mcp-example', version: '1.0.0' }), paywall, runs, c);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, req.method === 'POST' ? await body(req) : undefined);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: err instanceof Error ? err.message : 'internal error' } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(c.port ?? 8412, c.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${c.host ?? '127.0.0.1'}:${port}/mcp`,
    url2026: `http://${c.host ?? '127.0.0.1'}:${port}/mcp/2026`,
    runs,
    close: () =>
      new Promise<void>((resolve) => {
        void modern.close();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
