import { mcpUrl, oauthIssuer, publicOrigin, type Env } from '../config/env.js';
import { SCOPES } from '@credit-facilitator/wire/onboarding';

/** RFC 9728 protected-resource metadata for {mcp_url}. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: string[];
  resource_name: string;
  resource_documentation?: string;
}

/** Path-suffixed form first (RFC 9728 §3.1: `/.well-known/oauth-protected-resource` + the resource's path). */
export const PRM_PATHS = ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'] as const;

/** The URL WWW-Authenticate challenges point agents at. */
export function resourceMetadataUrl(env: Env): string {
  return `${publicOrigin(env)}${PRM_PATHS[0]}`;
}

export function protectedResourceMetadata(env: Env): ProtectedResourceMetadata {
  return {
    resource: mcpUrl(env),
    authorization_servers: [oauthIssuer(env)],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Credit facilitator agent tools',
  };
}
