import assert from 'node:assert/strict';
import { auth, Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { Page } from 'playwright-core';
import { newIdempotencyKey } from '@credit-facilitator/agent-client/credit-agent';
import type { WorkloadKey } from '@credit-facilitator/agent-client/workload-key';
import { payFetch } from '@credit-facilitator/agent-client/x402-fetch';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { createDemoMerchant, type DemoMerchant } from '../../examples/demo-merchant/app.js';
import { demoMerchantConfig } from '../../examples/demo-merchant/config.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { encodeKey } from '@credit-facilitator/wire/voucher';
import { createLogger } from '../../src/observability/logger.js';
import { call, newMerchant, type TestMerchant, type World } from '../helpers/world.js';
import { signOnPage } from './browser.js';
import { InMemoryV2OAuthProvider } from './sdk-v2-oauth.js';

export const PRICE = '2500000';

/** One request the SDK made (discovery, registration, token, /mcp), as it made it. */
export interface Sent {
  method: string;
  url: string;
  headers: Headers;
  body: string | undefined;
}

/** What the borrower saw on our sign-in page (each time they signed). */
export interface SignInSeen {
  clientName: string | null;
  /** The host publishing the client's metadata document (CIMD clients only). */
  clientHost: string | null;
}

/** How the host's session client picks its revision (ClientOptions.versionNegotiation); unset: the plain 2025 initialize. */
export type VersionNegotiation = NonNullable<ConstructorParameters<typeof Client>[1]>['versionNegotiation'];

/**
 * The eras a v2 journey runs in: the stock client's default (initialize, 2025-11-25, served by the
 * v1 SDK) and pinned to 2026-07-28 (server/discover, `_meta` per request, served by the v2 server).
 */
export const JOURNEY_ERAS: readonly { name: string; version: string; versionNegotiation?: VersionNegotiation }[] = [
  { name: 'initialize (2025-11-25)', version: '2025-11-25' },
  { name: 'pinned to 2026-07-28', version: '2026-07-28', versionNegotiation: { mode: { pin: '2026-07-28' } } },
];

/**
 * Every /mcp POST of a journey spoke `version` and no session was ever used; at 2026-07-28 there
 * was no initialize, and every request named its method (and tool) in Mcp-Method / Mcp-Name.
 */
export function assertSpokeRevision(sent: readonly Sent[], url: URL, version: string): void {
  const posts = sent.filter((s) => s.method === 'POST' && s.url === url.href);
  const calls = posts.filter((s) => !s.body?.includes('"initialize"'));
  assert.ok(calls.length > 5);
  assert.ok(calls.every((s) => s.headers.get('mcp-protocol-version') === version), `MCP-Protocol-Version ${version} on every call`);
  assert.ok(posts.every((s) => !s.headers.has('mcp-session-id')), 'stateless: no session id to send');
  if (version < '2026-07-28') return;
  assert.equal(calls.length, posts.length, 'no initialize at 2026-07-28');
  for (const s of calls) {
    const body = JSON.parse(s.body ?? '{}') as { method?: string; params?: { name?: string; _meta?: Record<string, unknown> } };
    assert.equal(s.headers.get('mcp-method'), body.method);
    if (body.method === 'tools/call') assert.equal(s.headers.get('mcp-name'), body.params?.name);
    if (body.method !== undefined && !body.method.startsWith('notifications/')) assert.equal(body.params?._meta?.['io.modelcontextprotocol/protocolVersion'], version, 'the envelope names the revision');
  }
  assert.ok(calls.some((s) => s.body?.includes('"server/discover"')), 'the client discovered the server');
}

/** Onboarding steps after which the host refreshes its token (auth() with the stored refresh token). */
export type OnboardingStep = 'register_borrower' | 'accept_credit_facility' | 'register_agent_key' | 'claim_handle';

/**
 * The browser half of an authorization: opens the URL; when our sign-in page shows, the wallet
 * connects and signs the WalletProof (a sign-in); when the borrower's session and consent already
 * cover the request (and the client is not native), the browser comes straight back. Returns where it landed.
 */
async function authorizeInBrowser(page: Page, authorizationUrl: string, redirectUri: string, seen: SignInSeen[], timeoutMs = 30_000): Promise<URL> {
  await page.goto(authorizationUrl);
  await page.waitForURL((u) => u.pathname.startsWith('/oauth/interaction/') || u.href.startsWith(redirectUri), { timeout: timeoutMs });
  if (!page.url().startsWith(redirectUri)) {
    const text = async (selector: string) => ((await page.locator(selector).count()) ? page.textContent(selector) : null);
    seen.push({ clientName: await text('#client-name'), clientHost: await text('#client-host') });
    await page.click('#connect');
    await page.waitForSelector('#sign:not([disabled])', { timeout: timeoutMs });
    await page.click('#sign');
    await page.waitForURL((u) => u.href.startsWith(redirectUri), { timeout: timeoutMs });
  }
  return new URL(page.url());
}

/**
 * An agent host on the stock v2 SDK (`@modelcontextprotocol/client`): its own OAuth provider (DCR,
 * or CIMD when `clientMetadataUrl` is given), the borrower's browser on our pages, and the record
 * of every request, authorization, callback and sign-in, for the e2e tests to check.
 */
export class V2AgentHost {
  readonly provider: InMemoryV2OAuthProvider;
  readonly sent: Sent[] = [];
  /** Every authorization URL the SDK opened, and every callback the browser landed on. */
  readonly authorizations: URL[] = [];
  readonly callbacks: URL[] = [];
  /** One entry per time the borrower signed in on our page. */
  readonly signIns: SignInSeen[] = [];
  #pending: Promise<URL>[] = [];
  #session: { client: Client; transport: StreamableHTTPClientTransport } | undefined;
  #versionNegotiation: VersionNegotiation | undefined;

  constructor(
    readonly url: URL,
    readonly page: Page,
    redirectUri: string,
    opts: { clientName?: string; clientMetadataUrl?: string; versionNegotiation?: VersionNegotiation } = {},
  ) {
    this.#versionNegotiation = opts.versionNegotiation;
    this.provider = new InMemoryV2OAuthProvider(
      redirectUri,
      (u) => {
        this.authorizations.push(u);
        this.#pending.push(authorizeInBrowser(page, u.href, redirectUri, this.signIns));
      },
      opts,
    );
  }

  readonly recordingFetch: typeof fetch = async (input, init) => {
    const body = init?.body;
    this.sent.push({
      method: init?.method ?? 'GET',
      url: String(input instanceof Request ? input.url : input),
      headers: new Headers(init?.headers),
      body: typeof body === 'string' ? body : body instanceof URLSearchParams ? body.toString() : undefined,
    });
    return fetch(input, init);
  };

  /** The browser came back to the loopback redirect: hand the whole callback query (code, state, iss) to the SDK. */
  async finishSignIn(transport: StreamableHTTPClientTransport): Promise<URL> {
    const pending = this.#pending.shift();
    assert.ok(pending, 'the SDK sent the borrower to authorize');
    const landed = await pending;
    this.callbacks.push(landed);
    assert.equal(landed.searchParams.get('state'), this.provider.pendingState);
    await transport.finishAuth(landed.searchParams);
    return landed;
  }

  /** A client connected through the SDK's OAuth (signing the borrower in once if it has no token). */
  async connect(opts: ConstructorParameters<typeof Client>[1] = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    for (let attempt = 0; ; attempt++) {
      const transport = new StreamableHTTPClientTransport(this.url, { authProvider: this.provider, fetch: this.recordingFetch });
      const client = new Client({ name: 'v2 e2e agent host', version: '1.0.0' }, opts);
      try {
        await client.connect(transport);
        return { client, transport };
      } catch (err) {
        if (!(err instanceof UnauthorizedError) || attempt > 0) throw err;
        await this.finishSignIn(transport);
      }
    }
  }

  /** Connects the session `tool()` uses. */
  async start(): Promise<void> {
    this.#session = await this.connect(this.#versionNegotiation ? { versionNegotiation: this.#versionNegotiation } : {});
  }

  /** The revision the session's client negotiated. */
  negotiatedVersion(): string | undefined {
    return this.#session?.client.getNegotiatedProtocolVersion();
  }

  async close(): Promise<void> {
    await this.#session?.client.close().catch(() => undefined);
  }

  /** tools/call; a step-up the SDK could not finish by refreshing sends the borrower to the browser once more. */
  async tool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const s = this.#session;
    assert.ok(s, 'start() first');
    let result;
    try {
      result = await s.client.callTool({ name, arguments: args });
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
      await this.finishSignIn(s.transport);
      result = await s.client.callTool({ name, arguments: args });
    }
    const out = result.structuredContent as Record<string, unknown> | undefined;
    assert.ok(!result.isError, `${name}: ${JSON.stringify(out ?? result.content)}`);
    assert.ok(out, `${name} answered structured content`);
    return out;
  }

  /** A signing tool: the borrower opens the link and signs in their wallet; re-call with the same arguments until done. */
  async signingStep(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    let step = await this.tool(name, args);
    if (step.status === 'signature_required') await signOnPage(this.page, String(step.signing_url));
    for (let i = 0; i < 20 && (step.status === 'signature_required' || step.status === 'processing'); i++) step = await this.tool(name, { ...args, wait_seconds: 10 });
    assert.equal(step.status, 'completed', JSON.stringify(step));
    return step;
  }

  /** The stock way to pick up scopes a stage just unlocked: auth() with a stored refresh token refreshes, no browser. */
  async refresh(): Promise<void> {
    assert.equal(await auth(this.provider, { serverUrl: this.url, fetchFn: this.recordingFetch }), 'AUTHORIZED');
  }

  /** The scopes of the token the host holds. */
  heldScopes(): Set<string> {
    return new Set(String(this.provider.tokens()?.scope ?? '').split(' ').filter(Boolean));
  }

  /**
   * register_borrower → accept_credit_facility → register_agent_key → claim_handle, the borrower
   * signing each step in the browser; after each step `afterStep` runs, then the host refreshes its
   * token if the step is in `refreshAfter`.
   */
  async onboard(o: {
    wallet: string;
    workloadKey: WorkloadKey;
    refreshAfter: readonly OnboardingStep[];
    label: string;
    afterStep?: (step: OnboardingStep) => void | Promise<void>;
  }): Promise<{ borrowerId: string; operationalAgentId: string }> {
    const refreshAfter = async (step: OnboardingStep) => {
      await o.afterStep?.(step);
      if (o.refreshAfter.includes(step)) await this.refresh();
    };
    const reg = await this.tool('register_borrower', { idempotency_key: newIdempotencyKey(), terminal_label: o.label });
    assert.equal(reg.stage, 'WALLET_VERIFIED');
    assert.equal(String(reg.wallet_address).toLowerCase(), o.wallet.toLowerCase());
    const operationalAgentId = reg.operational_agent_id as string;
    const borrowerId = reg.borrower_id as string;
    await refreshAfter('register_borrower');
    await this.signingStep('accept_credit_facility', { idempotency_key: newIdempotencyKey() });
    await refreshAfter('accept_credit_facility');
    await this.signingStep('register_agent_key', {
      idempotency_key: newIdempotencyKey(), operational_agent_id: operationalAgentId, public_key: encodeKey(o.workloadKey.publicKey),
      per_payment_limit: '10000000', daily_limit: '50000000', expires_at: Math.floor(Date.now() / 1000) + 7 * 24 * 3600,
    });
    await refreshAfter('register_agent_key');
    const handle = await this.tool('claim_handle', { idempotency_key: newIdempotencyKey(), handle: `v2_${borrowerId.slice(0, 8)}` });
    assert.equal(handle.stage, 'ACTIVE');
    await refreshAfter('claim_handle');
    return { borrowerId, operationalAgentId };
  }

  /** A paid GET on the shop through x402, the voucher prepared with prepare_x402_payment. */
  pay(shopUrl: string, workloadKey: WorkloadKey, operationalAgentId: string) {
    return payFetch(
      { prepare: (a) => this.tool('prepare_x402_payment', { ...a }), privateKey: workloadKey.privateKey, orderKeys: new Map(), operationalAgentId },
      `${shopUrl}/premium/report`,
    );
  }
}

/** A merchant and its demo shop selling one report at PRICE through this stack. */
export async function openShop(w: World, name: string): Promise<{ merchant: TestMerchant; shop: DemoMerchant }> {
  const merchant = await newMerchant(w, name);
  const shop = await createDemoMerchant(
    demoMerchantConfig({ apiKey: merchant.apiKey, merchantId: merchant.merchantId, payTo: merchant.payoutAddress, facilitatorUrl: w.baseUrl, price: PRICE, port: 0, pollIntervalMs: 200 }),
    { logger: createLogger('silent') },
  );
  return { merchant, shop };
}

/** The shop answered 200 to the paid request; the payment is CONFIRMED for the borrower and the debt is on chain. */
export async function assertPaidAndSettled(w: World, merchant: TestMerchant, paid: Awaited<ReturnType<typeof payFetch>>, borrowerId: string): Promise<void> {
  assert.equal(paid.response.status, 200, await paid.response.clone().text());
  assert.ok(paid.paid && paid.paymentId);
  const poll = await call(w, 'GET', `/facilitator/payments/${paid.paymentId}`, { token: merchant.apiKey });
  assert.equal(poll.json.status, 'CONFIRMED');
  assert.equal(poll.json.payer, borrowerId);
  const debt = (await w.publicClient.readContract({ address: w.settlement, abi: creditSettlementAbi, functionName: 'debtOf', args: [uuidToBytes32(borrowerId)] })) as bigint;
  assert.equal(debt, BigInt(PRICE));
}
