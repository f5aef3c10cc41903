import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';

type Stored<K extends keyof OAuthClientProvider> = OAuthClientProvider[K] extends ((...a: never[]) => infer R) | undefined ? Awaited<R> : never;

/**
 * The smallest OAuthClientProvider an agent host writes for the v2 SDK (@modelcontextprotocol/client):
 * in memory, a public client with a loopback redirect. Nothing of ours: the SDK chooses
 * `application_type`, `grant_types` and the scope; the host only opens the browser. With
 * `clientMetadataUrl` (an https URL where the host publishes its client metadata document) the SDK
 * uses that URL as its client_id when the authorization server advertises
 * `client_id_metadata_document_supported` (CIMD); otherwise it registers itself (DCR).
 */
export class InMemoryV2OAuthProvider implements OAuthClientProvider {
  #client: Stored<'clientInformation'>;
  #tokens: Stored<'tokens'>;
  #verifier: string | undefined;
  #discovery: Stored<'discoveryState'>;
  #state: string | undefined;
  readonly clientMetadataUrl: string | undefined;
  private readonly clientName: string;

  constructor(
    readonly redirectUrl: string,
    private readonly openBrowser: (authorizationUrl: URL) => void,
    opts: { clientName?: string; clientMetadataUrl?: string } = {},
  ) {
    this.clientName = opts.clientName ?? 'v2 SDK agent host';
    this.clientMetadataUrl = opts.clientMetadataUrl;
  }

  get clientMetadata() {
    return { client_name: this.clientName, redirect_uris: [this.redirectUrl], token_endpoint_auth_method: 'none' };
  }

  /** The state of the authorization in flight (the host's callback compares it). */
  get pendingState(): string | undefined {
    return this.#state;
  }

  state(): string {
    this.#state = randomBytes(16).toString('base64url');
    return this.#state;
  }

  clientInformation() {
    return this.#client;
  }

  saveClientInformation(info: NonNullable<Stored<'clientInformation'>>): void {
    this.#client = info;
  }

  tokens() {
    return this.#tokens;
  }

  saveTokens(tokens: NonNullable<Stored<'tokens'>>): void {
    this.#tokens = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.openBrowser(url);
  }

  saveCodeVerifier(v: string): void {
    this.#verifier = v;
  }

  codeVerifier(): string {
    if (!this.#verifier) throw new Error('no authorization in flight');
    return this.#verifier;
  }

  saveDiscoveryState(state: NonNullable<Stored<'discoveryState'>>): void {
    this.#discovery = state;
  }

  discoveryState() {
    return this.#discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.#client = undefined;
    if (scope === 'all' || scope === 'tokens') this.#tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.#verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
  }
}
