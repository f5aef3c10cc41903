import { readFileSync } from 'node:fs';
import { errors, type ClientInstance } from 'oidc-provider';
import type { Env } from '../../config/env.js';
import { guardedJsonFetch } from '../../net/guarded-json-fetch.js';
import { isLoopbackHost } from '../../domain/redirect-policy.js';
import { registrationDocumentProblem } from './registration-guard.js';

/**
 * OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the MCP
 * 2025-11-25 client identification): a client_id that is an https URL names the JSON document
 * describing the client. oidc-provider resolves it (features.clientIdMetadataDocument: checks the
 * URL form, that the document's client_id equals the URL, caches it by Cache-Control/Expires); this
 * module sets the limits, the SSRF-guarded fetch and what such a client may be.
 */
export const CIMD_MAX_BYTES = 5 * 1024;
/** oidc-provider also aborts every outbound fetch at 2.5 s; ours covers DNS, TLS and the body. */
export const CIMD_FETCH_TIMEOUT_MS = 2_500;
/** Seconds a fetched document is reused: its max-age (or Expires) bounded to this range. */
export const CIMD_CACHE_SECONDS = { min: 60, max: 3600 } as const;
/** A document that could not be fetched is not asked for again for this long. */
export const CIMD_FAILURE_MEMORY_MS = 10_000;
const MAX_CLIENT_ID_URL = 2048;

/** True when `clientId` names a metadata document (DCR client ids are random strings, never URLs). */
export function isCimdClientId(clientId: string): boolean {
  return /^https:\/\//i.test(clientId);
}

/** oidc-provider's outbound fetch (only client ID metadata documents: every other fetched URI is refused at registration). */
export function cimdFetch(env: Env) {
  const testLoopbackCaPem = env.OAUTH_CIMD_TEST_CA_FILE !== undefined ? readFileSync(env.OAUTH_CIMD_TEST_CA_FILE, 'utf8') : undefined;
  return guardedJsonFetch({ timeoutMs: CIMD_FETCH_TIMEOUT_MS, maxBytes: CIMD_MAX_BYTES, failureMemoryMs: CIMD_FAILURE_MEMORY_MS, ...(testLoopbackCaPem ? { testLoopbackCaPem } : {}) });
}

function listsLoopbackRedirect(uris: unknown): boolean {
  return Array.isArray(uris) && uris.some((u) => {
    const url = typeof u === 'string' ? URL.parse(u) : null;
    return url !== null && isLoopbackHost(url.hostname);
  });
}

/** The `features.clientIdMetadataDocument` setting. */
export function cimdFeature(env: Env) {
  return {
    enabled: env.OAUTH_CIMD_ENABLED,
    ack: 'draft-02',
    cacheDuration: { ...CIMD_CACHE_SECONDS },
    allowFetch: async (_ctx: unknown, clientId: string) => clientId.length <= MAX_CLIENT_ID_URL,
    // Public clients only, with the same field types, sizes and refused URIs as a DCR document.
    allowClient: async (_ctx: unknown, client: ClientInstance & { metadata(): Record<string, unknown> }) => {
      if (client.clientAuthMethod !== 'none') {
        throw new errors.InvalidClientMetadata(
          `client metadata document: token_endpoint_auth_method "${client.clientAuthMethod}" is not supported; only public clients ("none", with PKCE) may identify by metadata document`,
        );
      }
      const metadata = client.metadata();
      const problem = registrationDocumentProblem(metadata);
      if (problem) throw new errors.InvalidClientMetadata(`client metadata document: ${problem}`);
      // Anyone may present a document's URL: a "web" client on loopback would be re-authorized
      // silently from an existing session, so loopback redirects are for native apps, which always ask.
      if (metadata.application_type !== 'native' && listsLoopbackRedirect(metadata.redirect_uris)) {
        throw new errors.InvalidClientMetadata('client metadata document: loopback redirect_uris need "application_type": "native"');
      }
      return true;
    },
  };
}
