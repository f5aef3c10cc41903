import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { Hex } from 'viem';
import { TestWallet, walletInitScript } from './test-wallet.js';

const BRIDGE = '__testWalletRequest';

export interface WalletPage {
  page: Page;
  wallet: TestWallet;
  context: BrowserContext;
}

export interface BrowserHandle {
  browser: Browser;
  /** A fresh browser context (own cookies) whose pages carry an EIP-1193 wallet for `privateKey`. */
  newWalletPage(privateKey: Hex, opts?: { chainId?: number }): Promise<WalletPage>;
  close(): Promise<void>;
}

/** Debian's headless Chromium through playwright-core (no bundled browsers). Close it in an after hook. */
export async function openBrowser(): Promise<BrowserHandle> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
  });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async newWalletPage(privateKey, opts = {}) {
      const wallet = new TestWallet(privateKey, opts.chainId ?? 84532);
      const context = await browser.newContext();
      contexts.push(context);
      await context.exposeFunction(BRIDGE, (method: string, params: unknown[]) => wallet.handle(method, params));
      await context.addInitScript({ content: walletInitScript(BRIDGE) });
      const page = await context.newPage();
      return { page, wallet, context };
    },
    async close() {
      await Promise.allSettled(contexts.map((c) => c.close()));
      await browser.close();
    },
  };
}

/**
 * Opens the authorization URL, connects the wallet and signs the WalletProof on our sign-in
 * page, then waits for the browser to land on `redirectUri`. Returns that final URL (?code=…&state=…).
 */
export async function completeSignIn(page: Page, authorizationUrl: string, redirectUri: string, timeoutMs = 30_000): Promise<URL> {
  await page.goto(authorizationUrl);
  await page.waitForURL((u) => u.pathname.startsWith('/oauth/interaction/'), { timeout: timeoutMs });
  await page.click('#connect');
  await page.waitForSelector('#sign:not([disabled])', { timeout: timeoutMs });
  await page.click('#sign');
  await page.waitForURL((u) => u.href.startsWith(redirectUri), { timeout: timeoutMs });
  return new URL(page.url());
}

/** Opens a signing link, signs with the page's wallet and waits until the page reports completion. */
export async function signOnPage(page: Page, signingUrl: string, timeoutMs = 60_000): Promise<string> {
  await page.goto(signingUrl);
  await page.waitForSelector('#sign:not([disabled])', { timeout: timeoutMs });
  await page.click('#sign');
  await page.waitForSelector('#status.ok, #status.error', { timeout: timeoutMs });
  const status = (await page.textContent('#status')) ?? '';
  if ((await page.getAttribute('#status', 'class'))?.includes('error')) throw new Error(`signing page reported: ${status}`);
  return status;
}

export interface RedirectCatcher {
  /** http://127.0.0.1:<port>/callback */
  redirectUri: string;
  close(): Promise<void>;
}

/** A loopback redirect URI that answers 200, as an agent host's local callback server would. */
export async function startRedirectCatcher(): Promise<RedirectCatcher> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('Authorization finished; you can close this window.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
