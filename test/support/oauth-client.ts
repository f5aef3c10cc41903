import { createHash, randomBytes } from 'node:crypto';
import { readJsonResponse, type JsonResponse } from './http.js';

/** A minimal OAuth 2.1 public client for tests: PKCE, dynamic registration, token requests. */
export type OAuthResponse = JsonResponse;

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function registerClient(origin: string, metadata: Record<string, unknown>): Promise<OAuthResponse> {
  return readJsonResponse(
    await fetch(`${origin}/oauth/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) }),
  );
}

/** Registers a public loopback client the way the MCP SDK does. */
export async function registerLoopbackClient(origin: string, redirectUri: string, name = 'Test agent host'): Promise<string> {
  const r = await registerClient(origin, {
    client_name: name,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  });
  if (r.status !== 201) throw new Error(`registration failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.client_id as string;
}

export function authorizationUrl(
  origin: string,
  p: { clientId: string; redirectUri: string; scope: string; state: string; challenge?: string; method?: string; resource?: string; responseType?: string },
): string {
  const q = new URLSearchParams({ response_type: p.responseType ?? 'code', client_id: p.clientId, redirect_uri: p.redirectUri, scope: p.scope, state: p.state });
  if (p.challenge !== undefined) q.set('code_challenge', p.challenge);
  if (p.method !== undefined) q.set('code_challenge_method', p.method);
  if (p.resource !== undefined) q.set('resource', p.resource);
  return `${origin}/oauth/auth?${q.toString()}`;
}

export async function tokenRequest(origin: string, params: Record<string, string>): Promise<OAuthResponse> {
  return readJsonResponse(
    await fetch(`${origin}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    }),
  );
}
