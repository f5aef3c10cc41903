import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import webpack from 'webpack';

/**
 * What the page exposes on window. The stock SDK browser client (Client + StreamableHTTPClientTransport)
 * behind `listMcpTools`; plain fetch for the rest, so the test sees what a page's script may read.
 */
const ENTRY = `
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const message = (e) => (e && e.message) || String(e);

window.listMcpTools = async (mcpUrl, token) => {
  const client = new Client({ name: 'cors-test-page', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: 'Bearer ' + token } } });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    return { ok: true, tools: tools.map((t) => t.name) };
  } catch (e) {
    return { ok: false, error: message(e) };
  } finally {
    await client.close().catch(() => undefined);
  }
};

// The SDK's own OAuth flow, as the Inspector runs it: discovery, registration, a redirect to sign in,
// the code exchanged from the page. State lives in sessionStorage across the navigations.
class PageAuthProvider {
  get redirectUrl() { return location.origin + '/callback'; }
  get clientMetadata() {
    return { client_name: 'Browser-hosted test client', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return JSON.parse(sessionStorage.getItem('client') ?? 'null') ?? undefined; }
  saveClientInformation(info) { sessionStorage.setItem('client', JSON.stringify(info)); }
  tokens() { return JSON.parse(sessionStorage.getItem('tokens') ?? 'null') ?? undefined; }
  saveTokens(tokens) { sessionStorage.setItem('tokens', JSON.stringify(tokens)); }
  saveCodeVerifier(v) { sessionStorage.setItem('verifier', v); }
  codeVerifier() { return sessionStorage.getItem('verifier'); }
  redirectToAuthorization(url) { location.href = url.href; }
}

async function connectAndList(mcpUrl, authProvider) {
  const client = new Client({ name: 'cors-test-page', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider }));
  try {
    const { tools } = await client.listTools();
    return { ok: true, tools: tools.map((t) => t.name) };
  } finally {
    await client.close().catch(() => undefined);
  }
}

window.startOAuth = async (mcpUrl) => {
  try {
    return await connectAndList(mcpUrl, new PageAuthProvider());
  } catch (e) {
    return { ok: false, error: message(e) };
  }
};

window.finishOAuth = async (mcpUrl) => {
  const authProvider = new PageAuthProvider();
  try {
    const code = new URL(location.href).searchParams.get('code');
    await new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider }).finishAuth(code);
    return await connectAndList(mcpUrl, authProvider);
  } catch (e) {
    return { ok: false, error: message(e) };
  }
};

window.postUnauthenticated = async (mcpUrl) => {
  try {
    const r = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return { ok: true, status: r.status, challenge: r.headers.get('www-authenticate') };
  } catch (e) {
    return { ok: false, error: message(e) };
  }
};

window.refreshToken = async (tokenUrl, clientId, refreshToken) => {
  try {
    const r = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }),
    });
    return { ok: true, status: r.status, body: await r.json() };
  } catch (e) {
    return { ok: false, error: message(e) };
  }
};
`;

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Bundles the page script with webpack (the SDK's ESM build, for the browser) into `dir`; returns the file. */
export async function bundleMcpBrowserClient(dir: string): Promise<string> {
  writeFileSync(join(dir, 'entry.mjs'), ENTRY);
  const compiler = webpack({
    mode: 'development',
    devtool: false,
    target: 'web',
    context: dir,
    entry: join(dir, 'entry.mjs'),
    output: { path: dir, filename: 'mcp-client.js' },
    resolve: { modules: [join(REPO_ROOT, 'node_modules')] },
    performance: { hints: false },
    infrastructureLogging: { level: 'error' },
  });
  await new Promise<void>((resolve, reject) => {
    compiler.run((err, stats) => {
      compiler.close(() => undefined);
      if (err) return reject(err);
      if (stats?.hasErrors()) return reject(new Error(stats.toString({ all: false, errors: true })));
      resolve();
    });
  });
  return join(dir, 'mcp-client.js');
}

export interface PageServer {
  /** http://127.0.0.1:<port>, the page's origin */
  origin: string;
  close(): Promise<void>;
}

/** A static server for the test page on its own port, i.e. an origin of its own. */
export async function servePage(bundle: string): Promise<PageServer> {
  const script = await readFile(bundle);
  const html = '<!doctype html><meta charset="utf-8"><title>MCP browser client</title><script src="/mcp-client.js"></script>';
  const server: Server = createServer((req, res) => {
    if (req.url === '/mcp-client.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(script);
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** ok false: the call threw in the page (for a CORS refusal, fetch's TypeError), with its message. */
interface InPage {
  ok: boolean;
  error?: string;
}
export interface ListedTools extends InPage {
  tools?: string[];
}
export interface UnauthenticatedAnswer extends InPage {
  status?: number;
  challenge?: string | null;
}
export interface TokenAnswer extends InPage {
  status?: number;
  body?: { access_token: string; refresh_token: string };
}

/** The functions the page script puts on window (see ENTRY); evaluated callbacks run in the page, so each names globalThis itself. */
interface PageApi {
  listMcpTools(mcpUrl: string, token: string): Promise<ListedTools>;
  postUnauthenticated(mcpUrl: string): Promise<UnauthenticatedAnswer>;
  refreshToken(tokenUrl: string, clientId: string, refreshToken: string): Promise<TokenAnswer>;
  startOAuth(mcpUrl: string): Promise<ListedTools>;
  finishOAuth(mcpUrl: string): Promise<ListedTools>;
}

export async function waitForPageScript(page: Page): Promise<void> {
  await page.waitForFunction(() => typeof (globalThis as unknown as Partial<PageApi>).listMcpTools === 'function');
}

/** The stock SDK client in the page connects to `mcpUrl` with the bearer token and lists the tools. */
export function listToolsInPage(page: Page, mcpUrl: string, token: string): Promise<ListedTools> {
  return page.evaluate(([u, t]) => (globalThis as unknown as PageApi).listMcpTools(u, t), [mcpUrl, token] as const);
}

export function postUnauthenticatedInPage(page: Page, mcpUrl: string): Promise<UnauthenticatedAnswer> {
  return page.evaluate((u) => (globalThis as unknown as PageApi).postUnauthenticated(u), mcpUrl);
}

export function refreshTokenInPage(page: Page, tokenUrl: string, clientId: string, refreshToken: string): Promise<TokenAnswer> {
  return page.evaluate(([u, c, r]) => (globalThis as unknown as PageApi).refreshToken(u, c, r), [tokenUrl, clientId, refreshToken] as const);
}

/** Starts the SDK's OAuth flow in the page; it ends in a navigation to the sign-in page, so nothing is awaited. */
export function startOAuthInPage(page: Page, mcpUrl: string): void {
  page.evaluate((u) => (globalThis as unknown as PageApi).startOAuth(u), mcpUrl).catch(() => undefined);
}

/** On the page's /callback: the SDK exchanges the code at the token endpoint, reconnects and lists the tools. */
export function finishOAuthInPage(page: Page, mcpUrl: string): Promise<ListedTools> {
  return page.evaluate((u) => (globalThis as unknown as PageApi).finishOAuth(u), mcpUrl);
}
