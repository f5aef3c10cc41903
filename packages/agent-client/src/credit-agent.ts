import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { startLoopbackReceiver, type LoopbackReceiver } from './loopback.js';
import { CreditAgentOAuthProvider } from './oauth.js';
import {
  CreditToolError,
  TOOL_OUTPUTS,
  type AcceptFacilityArgs,
  type AgentKeyArgs,
  type BorrowerStatusArgs,
  type ClaimHandleArgs,
  type CreditToolName,
  type PrepareX402Args,
  type RegisterBorrowerArgs,
  type RepaymentArgs,
  type SigningStepResult,
  type SigningToolName,
  type ToolOutput,
} from './tool-types.js';
import type { WorkloadKey } from './workload-key.js';
import { isStage, NEXT_ONBOARDING_STEP, onboardingShortfall, parseScopeString, stageOfScopes, TOOL_SCOPES, type OnboardingStage, type ToolName } from '@credit-facilitator/wire/onboarding';
import { payFetch, type PaidResponse, type PayOptions } from './x402-fetch.js';
import { PaidMcpClient, type PaidMcpOptions, type ToolCaller } from './paid-mcp.js';

export interface CreditAgentOptions {
  /** {mcp_url}, e.g. http://127.0.0.1:8402/mcp. */
  mcpUrl: string;
  workloadKey: WorkloadKey;
  /** Sends the borrower to sign in: open the system browser on a desktop, drive headless Chromium in tests. */
  openAuthorizationUrl: (url: URL) => void | Promise<void>;
  /** Required only when the borrower has several terminals. */
  operationalAgentId?: string;
  clientName?: string;
  /** Optional file (0600) keeping the OAuth registration and tokens across runs. */
  oauthStoragePath?: string;
  /** A fixed loopback port (needed when oauthStoragePath keeps a registration between runs). */
  redirectPort?: number;
  signInTimeoutMs?: number;
  /** fetch used for merchants (payFetch). */
  fetch?: typeof fetch;
  now?: () => number;
}

export interface WaitOptions {
  /** Server-side long-poll per call (at most 25). */
  waitSeconds?: number;
  timeoutMs?: number;
}

const PENDING = new Set(['signature_required', 'processing']);

/** A fresh UUID v4 for a tool write; reuse it to replay or poll the same call. */
export const newIdempotencyKey = (): string => randomUUID();

/**
 * An agent host's connection to the credit service: the stock MCP client over Streamable HTTP with
 * OAuth, typed tools, and x402 payments signed by a workload key that never leaves this process.
 */
export class CreditAgent {
  readonly oauth: CreditAgentOAuthProvider;
  readonly #receiver: LoopbackReceiver;
  readonly #opts: CreditAgentOptions;
  readonly #orderKeys = new Map<string, string>();
  #client: Client | undefined;
  #transport: StreamableHTTPClientTransport | undefined;
  #refreshing: Promise<void> | undefined;
  #signingIn: Promise<void> | undefined;

  private constructor(opts: CreditAgentOptions, receiver: LoopbackReceiver) {
    this.#opts = opts;
    this.#receiver = receiver;
    this.oauth = new CreditAgentOAuthProvider({
      redirectUrl: receiver.redirectUrl,
      onRedirect: opts.openAuthorizationUrl,
      clientName: opts.clientName ?? 'credit-agent',
      ...(opts.oauthStoragePath ? { storagePath: opts.oauthStoragePath } : {}),
      ...(opts.now ? { now: opts.now } : {}),
    });
  }

  /** Starts the loopback redirect receiver; call connect() next. */
  static async create(opts: CreditAgentOptions): Promise<CreditAgent> {
    let agent: CreditAgent | undefined;
    const receiver = await startLoopbackReceiver({
      ...(opts.redirectPort !== undefined ? { port: opts.redirectPort } : {}),
      expectedState: () => agent?.oauth.pendingState,
    });
    agent = new CreditAgent(opts, receiver);
    return agent;
  }

  get mcpUrl(): URL {
    return new URL(this.#opts.mcpUrl);
  }

  get operationalAgentId(): string | undefined {
    return this.#opts.operationalAgentId;
  }

  /** Remembers the terminal id register_borrower returned, for later calls and vouchers. */
  set operationalAgentId(id: string | undefined) {
    this.#opts.operationalAgentId = id;
  }

  /**
   * Signs in when needed (the borrower approves in their browser, the code comes back to the
   * loopback receiver), then opens the MCP session.
   */
  async connect(): Promise<void> {
    if (this.oauth.tokens()) await this.ensureFreshToken();
    else await this.#authorize();
    try {
      await this.#openSession();
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
      // The transport's own auth() already sent the borrower to sign in; finish that and retry once.
      await this.#finishSignIn();
      await this.#openSession();
    }
  }

  async close(): Promise<void> {
    await this.#client?.close().catch(() => undefined);
    this.#client = undefined;
    this.#transport = undefined;
    await this.#receiver.close();
  }

  /**
   * Refreshes the borrower token when it expires within three minutes. Time is the only trigger:
   * a longer scope list from get_borrower_status is not a reason to refresh. (A tool refused for a
   * missing scope is handled by the SDK transport, which refreshes on 403 insufficient_scope.)
   */
  async ensureFreshToken(): Promise<void> {
    if (!this.oauth.needsRefresh()) return;
    // Refresh tokens rotate on every use: two concurrent refreshes would burn the grant.
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = undefined;
    });
    await this.#refreshing;
  }

  /** Refreshes now, whatever the expiry (e.g. right after onboarding advanced the stage). */
  async refreshToken(): Promise<void> {
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = undefined;
    });
    await this.#refreshing;
  }

  async callTool<T extends CreditToolName>(tool: T, input: object): Promise<ToolOutput<T>> {
    await this.ensureFreshToken();
    const args = { ...input } as Record<string, unknown>;
    const call = () => this.#session().callTool({ name: tool, arguments: args }, undefined, { timeout: 90_000 });
    let result;
    try {
      try {
        result = await call();
      } catch (err) {
        if (!(err instanceof UnauthorizedError)) throw err;
        await this.#finishSignIn();
        result = await call();
      }
    } catch (err) {
      // The transport already refreshed once on insufficient_scope: the borrower's stage does not allow this tool yet.
      if (err instanceof StreamableHTTPError && err.code === 403) throw await this.#scopeRefusal(tool);
      throw err;
    }
    const structured = (result.structuredContent ?? textJson(result.content)) as Record<string, unknown> | undefined;
    if (result.isError) {
      const e = (structured?.error ?? {}) as Record<string, unknown>;
      const { code, message, ...details } = e;
      throw new CreditToolError(tool, typeof code === 'string' ? code : 'TOOL_ERROR', typeof message === 'string' ? message : textOf(result.content), details);
    }
    const parsed = TOOL_OUTPUTS[tool].safeParse(structured);
    if (!parsed.success) {
      throw new CreditToolError(tool, 'UNEXPECTED_OUTPUT', `${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    }
    return parsed.data as ToolOutput<T>;
  }

  registerBorrower(args: RegisterBorrowerArgs) {
    return this.callTool('register_borrower', { ...args });
  }

  getBorrowerStatus(args: BorrowerStatusArgs = {}) {
    return this.callTool('get_borrower_status', this.#withAgent(args));
  }

  acceptCreditFacility(args: AcceptFacilityArgs) {
    return this.callTool('accept_credit_facility', { ...args });
  }

  registerAgentKey(args: AgentKeyArgs) {
    return this.callTool('register_agent_key', this.#signingArgs('register_agent_key', args));
  }

  rotateAgentKey(args: AgentKeyArgs) {
    return this.callTool('rotate_agent_key', this.#signingArgs('rotate_agent_key', args));
  }

  claimHandle(args: ClaimHandleArgs) {
    return this.callTool('claim_handle', { ...args });
  }

  prepareX402Payment(args: PrepareX402Args) {
    return this.callTool('prepare_x402_payment', this.#withAgent({ ...args }));
  }

  executeRepayment(args: RepaymentArgs) {
    return this.callTool('execute_repayment', { ...args });
  }

  /**
   * Re-calls a signing tool with the same arguments (same idempotency_key) until the borrower's
   * wallet step is completed, failed or expired.
   */
  async waitForSigning(step: SigningStepResult, tool: SigningToolName, args: Record<string, unknown> & { idempotency_key: string }, opts: WaitOptions = {}): Promise<SigningStepResult> {
    const deadline = Date.now() + (opts.timeoutMs ?? 15 * 60_000);
    const waitSeconds = Math.min(25, Math.max(0, opts.waitSeconds ?? 20));
    const same = this.#signingArgs(tool, args);
    let current = step;
    while (PENDING.has(current.status)) {
      if (Date.now() >= deadline) throw new Error(`${tool}: the borrower did not sign before the wait ended (status ${current.status})`);
      const next = await this.callTool(tool, { ...same, wait_seconds: waitSeconds });
      current = next as SigningStepResult;
    }
    return current;
  }

  /**
   * Calls a signing tool, hands its signing link to the host (the borrower opens it and signs in
   * their own wallet), then waits for the outcome.
   */
  async completeSigningStep(
    tool: SigningToolName,
    args: Record<string, unknown> & { idempotency_key: string },
    onSigningUrl: (signingUrl: string, step: SigningStepResult) => void | Promise<void>,
    opts: WaitOptions = {},
  ): Promise<SigningStepResult> {
    const first = (await this.callTool(tool, this.#signingArgs(tool, args))) as SigningStepResult;
    if (first.status === 'signature_required') await onSigningUrl(first.signing_url, first);
    return this.waitForSigning(first, tool, args, opts);
  }

  /** fetch that pays a merchant's 402 with the borrower's credit (see x402-fetch.ts). */
  payFetch(input: string | URL, init: RequestInit = {}, opts: PayOptions = {}): Promise<PaidResponse> {
    return payFetch(
      {
        prepare: (a) => this.prepareX402Payment(a),
        privateKey: this.#opts.workloadKey.privateKey,
        orderKeys: this.#orderKeys,
        ...(this.#opts.operationalAgentId ? { operationalAgentId: this.#opts.operationalAgentId } : {}),
        ...(this.#opts.fetch ? { fetch: this.#opts.fetch } : {}),
      },
      input,
      init,
      opts,
    );
  }

  /** The SDK drops the 403's body, so the stage is asked for (or read off the token's scopes) to name the next step. */
  async #scopeRefusal(tool: CreditToolName): Promise<CreditToolError> {
    const fromToken = () => stageOfScopes(parseScopeString(this.oauth.tokens()?.scope));
    let stage: OnboardingStage;
    try {
      const status = tool === 'get_borrower_status' ? undefined : await this.getBorrowerStatus();
      stage = isStage(status?.stage) ? status.stage : fromToken();
    } catch {
      stage = fromToken();
    }
    const why = isToolName(tool) ? onboardingShortfall(tool, stage) : undefined;
    const message = why
      ? `${why}, then retry`
      : `the borrower token lacks this tool's scopes although the borrower is at stage ${stage}: refresh the token (refreshToken()) and retry`;
    return new CreditToolError(tool, 'INSUFFICIENT_SCOPE', message, { stage, ...(why ? { next_step: NEXT_ONBOARDING_STEP[stage] } : {}) });
  }

  /**
   * Wraps another MCP server's client (v1 or v2 SDK) so its paid tools are paid with the
   * borrower's credit (x402 MCP transport; see paid-mcp.ts).
   */
  paidMcpClient(client: ToolCaller, opts: Omit<PaidMcpOptions, 'prepare' | 'privateKey' | 'operationalAgentId'> = {}): PaidMcpClient {
    return new PaidMcpClient(client, {
      ...opts,
      prepare: (a) => this.prepareX402Payment(a),
      privateKey: this.#opts.workloadKey.privateKey,
      ...(this.#opts.operationalAgentId ? { operationalAgentId: this.#opts.operationalAgentId } : {}),
    });
  }

  /** Key tools default to this agent's workload key and terminal, so a re-call sends the very same arguments. */
  #signingArgs(tool: SigningToolName, args: object): Record<string, unknown> {
    const a = { ...args } as Record<string, unknown>;
    if (tool !== 'register_agent_key' && tool !== 'rotate_agent_key') return a;
    return this.#withAgent({ public_key: this.#opts.workloadKey.publicKeyBase64Url, ...a });
  }

  #withAgent<A extends object>(args: A): A & { operational_agent_id?: string } {
    const id = this.#opts.operationalAgentId;
    return id && !('operational_agent_id' in args) ? { ...args, operational_agent_id: id } : args;
  }

  #session(): Client {
    if (!this.#client) throw new Error('not connected: call connect() first');
    return this.#client;
  }

  async #openSession(): Promise<void> {
    await this.#client?.close().catch(() => undefined);
    this.#transport = new StreamableHTTPClientTransport(this.mcpUrl, { authProvider: this.oauth });
    this.#client = new Client({ name: this.#opts.clientName ?? 'credit-agent', version: '1.0.0' });
    await this.#client.connect(this.#transport);
  }

  /** Full authorization up front, asking for every scope the agent will need. */
  async #authorize(): Promise<void> {
    const result = await auth(this.oauth, { serverUrl: this.mcpUrl, scope: this.oauth.scopes.join(' ') });
    if (result === 'REDIRECT') await this.#finishSignIn();
  }

  async #refresh(): Promise<void> {
    // With a refresh token stored, auth() performs the refresh_token grant; if the grant is gone it
    // falls back to a new authorization, which the borrower completes in the browser.
    const result = await auth(this.oauth, { serverUrl: this.mcpUrl, scope: this.oauth.scopes.join(' ') });
    if (result === 'REDIRECT') await this.#finishSignIn();
  }

  async #finishSignIn(): Promise<void> {
    this.#signingIn ??= (async () => {
      const code = await this.#receiver.waitForCode(this.#opts.signInTimeoutMs ?? 300_000);
      if (this.#transport) await this.#transport.finishAuth(code);
      else {
        const r = await auth(this.oauth, { serverUrl: this.mcpUrl, authorizationCode: code });
        if (r !== 'AUTHORIZED') throw new UnauthorizedError('the authorization code was not accepted');
      }
    })().finally(() => {
      this.#signingIn = undefined;
    });
    await this.#signingIn;
  }
}

function isToolName(tool: string): tool is ToolName {
  return Object.prototype.hasOwnProperty.call(TOOL_SCOPES, tool);
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return 'tool error';
  const t = content.find((c): c is { type: 'text'; text: string } => typeof c === 'object' && c !== null && c.type === 'text');
  return t?.text.slice(0, 500) ?? 'tool error';
}

function textJson(content: unknown): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(textOf(content));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
