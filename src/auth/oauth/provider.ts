import Provider, { errors, type ClientInstance, type ProviderContext } from 'oidc-provider';
import type { AuthDeps } from '../deps.js';
import { dcrAllowedHosts, mcpUrl, oauthIssuer } from '../../config/env.js';
import { SCOPES, scopesForStage } from '@credit-facilitator/wire/onboarding';
import { findBorrower } from '../../store/borrowers.js';
import { errorPage } from '../../http/html.js';
import { GRANT_ID_CLAIM } from '../../store/oauth-grants.js';
import { corsPolicy, providerCorsFilter } from '../../http/cors.js';
import { OutboundFetchRefused } from '../../net/guarded-json-fetch.js';
import { CIMD_MAX_BYTES, cimdFeature, cimdFetch, isCimdClientId } from './cimd.js';
import { mongoAdapterFactory } from '../../store/oauth-state.js';
import { cimdRedirectUriProblem, redirectUriProblem } from '../../domain/redirect-policy.js';

/** Where oidc-provider sends the browser to sign in (served by src/borrower-web). */
export function interactionPath(uid: string): string {
  return `/oauth/interaction/${encodeURIComponent(uid)}`;
}

const INTERACTION_TTL_SECONDS = 15 * 60;
const SESSION_TTL_SECONDS = 24 * 3600;

/**
 * The OAuth 2.1 authorization server for agent hosts (docs/agent-side.md): authorization code
 * with PKCE S256 only, refresh tokens rotating on every use, RFC 7591 registration restricted to
 * loopback / allow-listed redirect URIs, client ID metadata documents (https client_id URLs, cimd.ts), and one RFC 8707 resource (the MCP endpoint) whose JWT
 * access tokens carry only the scopes the borrower's onboarding stage unlocks.
 */
export function createOAuthProvider(deps: AuthDeps): Provider {
  const { env } = deps;
  const resource = mcpUrl(env);
  const allowedHosts = dcrAllowedHosts(env);
  const secureCookies = oauthIssuer(env).startsWith('https:');
  const cookieOptions = { httpOnly: true, sameSite: 'lax', secure: secureCookies };
  const cors = corsPolicy(env);

  const resourceServer = (scope: string) => ({
    scope,
    audience: resource,
    accessTokenFormat: 'jwt',
    accessTokenTTL: env.BORROWER_TOKEN_TTL_SECONDS,
    jwt: { sign: { alg: 'ES256' } },
  });

  const provider = new Provider(oauthIssuer(env), {
    adapter: mongoAdapterFactory(() => deps.store.db, deps.nowMs, { unusedClientTtlMs: env.OAUTH_UNUSED_CLIENT_TTL_HOURS * 3600_000 }),
    jwks: deps.oauthKeys.privateJwks,
    cookies: { keys: deps.oauthKeys.cookieKeys, long: cookieOptions, short: cookieOptions },

    findAccount: async (_ctx: ProviderContext, sub: string) => {
      const borrower = await findBorrower(deps.store.c, sub);
      return borrower ? { accountId: borrower._id, claims: () => ({ sub: borrower._id }) } : undefined;
    },
    // Listed so discovery advertises them and registration accepts them in client metadata; the
    // grant holds them, and access tokens get them through the MCP resource server (stage-gated).
    scopes: ['openid', 'offline_access', ...SCOPES],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    // Public clients only (PKCE, no secret): the metadata advertises "none" alone, and registration
    // refuses client_secret_* and private_key_jwt (registration-guard.ts says why first).
    clientAuthMethods: ['none'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    // Agent hosts rarely ask for offline_access: every client allowed the grant gets refresh tokens.
    issueRefreshToken: async (_ctx: ProviderContext, client: ClientInstance) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    extraClientMetadata: {
      properties: ['redirect_uris'],
      validator(_ctx: unknown, key: string, value: unknown, metadata: { client_id?: unknown }) {
        if (key !== 'redirect_uris' || !Array.isArray(value)) return;
        const cimdUrl = typeof metadata.client_id === 'string' && isCimdClientId(metadata.client_id) ? metadata.client_id : null;
        for (const uri of value) {
          if (typeof uri !== 'string') throw new errors.InvalidClientMetadata('redirect_uris must be an array of strings');
          const problem = cimdUrl ? cimdRedirectUriProblem(uri, cimdUrl, allowedHosts) : redirectUriProblem(uri, allowedHosts);
          if (problem) throw new errors.InvalidClientMetadata(problem);
        }
      },
    },
    // Token and revocation requests from a browser origin not on MCP_CORS_ORIGINS are refused
    // outright (a form POST needs no preflight); allowed origins get their headers from src/http/cors.ts.
    clientBasedCORS: (_ctx: ProviderContext, origin: string) => cors.allows(origin),
    // Each access token names its grant, so /mcp refuses it as soon as the grant is revoked
    // (refresh-token reuse, code replay, revocation) instead of at expiry (src/mcp/auth.ts).
    formats: {
      customizers: {
        jwt: async (_ctx: ProviderContext, token: { grantId?: unknown }, jwt: { payload: Record<string, unknown> }) => {
          if (typeof token.grantId === 'string') jwt.payload[GRANT_ID_CLAIM] = token.grantId;
        },
      },
    },
    interactions: { url: (_ctx: ProviderContext, interaction: { uid: string }) => interactionPath(interaction.uid) },
    renderError: async (ctx: ProviderContext, out: { error?: string; error_description?: string }, err?: unknown) => {
      // Why a client metadata document could not be fetched is ours to say (the fetch's own words).
      const cause = err instanceof Error && err.cause instanceof OutboundFetchRefused ? `: ${err.cause.message}` : '';
      ctx.type = 'html';
      ctx.body = errorPage('Sign-in could not continue', `${out.error ?? 'error'}: ${out.error_description ?? 'the request could not be processed'}${cause}`);
    },
    // Outbound requests (client ID metadata documents only) go through the SSRF-guarded fetch.
    fetch: cimdFetch(env),
    fetchResponseBodyLimits: { 'client_id metadata document': CIMD_MAX_BYTES, jwks_uri: CIMD_MAX_BYTES, sector_identifier_uri: CIMD_MAX_BYTES },
    ttl: {
      AccessToken: env.BORROWER_TOKEN_TTL_SECONDS,
      AuthorizationCode: 60,
      IdToken: env.BORROWER_TOKEN_TTL_SECONDS,
      RefreshToken: env.REFRESH_TOKEN_TTL_SECONDS,
      Grant: env.REFRESH_TOKEN_TTL_SECONDS,
      Interaction: INTERACTION_TTL_SECONDS,
      Session: SESSION_TTL_SECONDS,
    },
    features: {
      devInteractions: { enabled: false },
      // No logout endpoint: agents never end a browser session here, and RP-initiated logout would
      // redirect to whatever post_logout_redirect_uris a client registered (an open redirect).
      rpInitiatedLogout: { enabled: false },
      registration: { enabled: env.OAUTH_DCR_ENABLED, initialAccessToken: false },
      clientIdMetadataDocument: cimdFeature(env),
      revocation: { enabled: true },
      // Neither is used by the agent hosts we serve nor tested here, so neither is offered or advertised.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      userinfo: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: async (ctx: ProviderContext, indicator: string) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`unknown resource; this server issues tokens only for ${resource}`);
          // While authorizing, every scope may be requested and granted; the stage gate applies
          // to each access token, so a refresh after the stage advances picks up the new scopes.
          if (ctx.oidc.route !== 'token') return resourceServer(SCOPES.join(' '));
          const accountId = ctx.oidc.entities.Account?.accountId;
          const borrower = accountId ? await findBorrower(deps.store.c, accountId) : null;
          if (!borrower) throw new errors.InvalidGrant();
          return resourceServer(scopesForStage(borrower.stage ?? 'SIGNED_IN').join(' '));
        },
      },
    },
  });
  provider.proxy = env.PUBLIC_ORIGIN !== undefined;
  provider.use(providerCorsFilter(cors));
  return provider;
}
