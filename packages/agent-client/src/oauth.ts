import { readFileSync, renameSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { needsRefresh, REFRESH_WINDOW_SECONDS, tokenExpiresAtMs, type TokenTiming } from './token-expiry.js';

export interface CreditAgentOAuthOptions {
  /** The loopback redirect URL (from startLoopbackReceiver). */
  redirectUrl: string;
  /** Sends the borrower to the authorization URL: open a browser on a desktop, drive headless Chromium in tests. */
  onRedirect: (authorizationUrl: URL) => void | Promise<void>;
  clientName?: string;
  /** Every scope the agent will need; requested at authorization (default: all service scopes). */
  scopes?: readonly string[];
  /** Optional JSON file (mode 0600) keeping the registration, tokens and discovery across runs. */
  storagePath?: string;
  now?: () => number;
}

const StoredSchema = z.object({
  clientInformation: z.record(z.string(), z.unknown()).optional(),
  tokens: z.record(z.string(), z.unknown()).optional(),
  obtainedAtMs: z.number().optional(),
  discovery: z.record(z.string(), z.unknown()).optional(),
});
type Stored = z.infer<typeof StoredSchema>;

/**
 * The MCP SDK's OAuth client side for one agent: a public client (PKCE, no secret) registered by
 * DCR with a loopback redirect URI. Tokens are kept with the time they arrived so expiry is known.
 */
export class CreditAgentOAuthProvider implements OAuthClientProvider {
  readonly scopes: readonly string[];
  #clientInformation: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #obtainedAtMs: number | undefined;
  #discovery: OAuthDiscoveryState | undefined;
  #codeVerifier: string | undefined;
  #pendingState: string | undefined;
  readonly #now: () => number;

  constructor(private readonly opts: CreditAgentOAuthOptions) {
    this.scopes = opts.scopes ?? SCOPES;
    this.#now = opts.now ?? Date.now;
    if (opts.storagePath && existsSync(opts.storagePath)) this.#load(opts.storagePath);
  }

  get redirectUrl(): string {
    return this.opts.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.opts.clientName ?? 'credit-agent',
      redirect_uris: [this.opts.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: this.scopes.join(' '),
    };
  }

  state(): string {
    this.#pendingState = randomBytes(16).toString('base64url');
    return this.#pendingState;
  }

  /** The state of the authorization in flight, for the loopback receiver to check. */
  get pendingState(): string | undefined {
    return this.#pendingState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#clientInformation;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#clientInformation = info;
    this.#persist();
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
    this.#obtainedAtMs = this.#now();
    this.#persist();
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    // The SDK narrows the request to the scope a 401/403 named; the borrower consents once to
    // everything the agent will need, so the request always carries the full list.
    const requested = new Set((authorizationUrl.searchParams.get('scope') ?? '').split(' ').filter(Boolean));
    for (const s of this.scopes) requested.add(s);
    authorizationUrl.searchParams.set('scope', [...requested].join(' '));
    await this.opts.onRedirect(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.#codeVerifier) throw new Error('no PKCE code verifier: no authorization is in flight');
    return this.#codeVerifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
    this.#persist();
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.#clientInformation = undefined;
    if (scope === 'all' || scope === 'tokens') {
      this.#tokens = undefined;
      this.#obtainedAtMs = undefined;
    }
    if (scope === 'all' || scope === 'verifier') this.#codeVerifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
    this.#persist();
  }

  /** When the access token arrived and how long it lives; undefined before sign-in. */
  tokenTiming(): TokenTiming | undefined {
    if (!this.#tokens || this.#obtainedAtMs === undefined) return undefined;
    const e = this.#tokens.expires_in;
    return { obtainedAtMs: this.#obtainedAtMs, ...(e !== undefined ? { expiresInSeconds: e } : {}) };
  }

  accessTokenExpiresAtMs(): number | undefined {
    const t = this.tokenTiming();
    return t && tokenExpiresAtMs(t);
  }

  /** True when the access token expires within the refresh window (time only, never scope lists). */
  needsRefresh(windowSeconds = REFRESH_WINDOW_SECONDS): boolean {
    const t = this.tokenTiming();
    return t !== undefined && needsRefresh(t, this.#now(), windowSeconds);
  }

  #load(path: string): void {
    const parsed = StoredSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (!parsed.success) throw new Error(`the OAuth state file ${path} is malformed`);
    const s = parsed.data;
    this.#clientInformation = s.clientInformation as OAuthClientInformationMixed | undefined;
    this.#tokens = s.tokens as OAuthTokens | undefined;
    this.#obtainedAtMs = s.obtainedAtMs;
    this.#discovery = s.discovery as OAuthDiscoveryState | undefined;
  }

  #persist(): void {
    const path = this.opts.storagePath;
    if (!path) return;
    const s: Stored = {
      ...(this.#clientInformation ? { clientInformation: { ...this.#clientInformation } } : {}),
      ...(this.#tokens ? { tokens: { ...this.#tokens } } : {}),
      ...(this.#obtainedAtMs !== undefined ? { obtainedAtMs: this.#obtainedAtMs } : {}),
      ...(this.#discovery ? { discovery: { ...this.#discovery } } : {}),
    };
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(tmp, JSON.stringify(s), { mode: 0o600, flag: 'wx' });
    renameSync(tmp, path);
  }
}
