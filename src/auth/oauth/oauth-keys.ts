/** The authorization server's keys and cookie secrets, shared by every API process through the store. */
export interface OAuthKeys {
  /** Private signing JWKS for oidc-provider. */
  privateJwks: { keys: Record<string, unknown>[] };
  /** Public half, which the MCP endpoint verifies borrower tokens against. */
  publicJwks: { keys: Record<string, unknown>[] };
  cookieKeys: string[];
}
