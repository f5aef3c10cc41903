import { missingScopes, SCOPES, TOOL_SCOPES, type Scope, type ToolName } from '@credit-facilitator/wire/onboarding';

export interface ScopeShortfall {
  tool: ToolName;
  /** Every scope the tool needs (what the challenge's `scope` names). */
  needed: Scope[];
  missing: Scope[];
  /** The JSON-RPC id of the refused call. */
  id: string | number | null;
}

function isToolName(name: unknown): name is ToolName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(TOOL_SCOPES, name);
}

/**
 * The first `tools/call` in a JSON-RPC message or batch whose tool needs a scope `granted`
 * lacks. Unknown tools and other methods pass: the MCP server answers them itself.
 */
export function findScopeShortfall(body: unknown, granted: readonly string[]): ScopeShortfall | undefined {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  for (const m of messages) {
    if (typeof m !== 'object' || m === null) continue;
    const msg = m as { method?: unknown; params?: { name?: unknown } | null; id?: unknown };
    if (msg.method !== 'tools/call') continue;
    const name = msg.params?.name;
    if (!isToolName(name)) continue;
    const missing = missingScopes(name, granted);
    if (missing.length > 0) {
      const id = typeof msg.id === 'string' || typeof msg.id === 'number' ? msg.id : null;
      return { tool: name, needed: [...TOOL_SCOPES[name]], missing, id };
    }
  }
  return undefined;
}

/**
 * The `scope` of a step-up challenge (MCP 2025-11-25, "Runtime Insufficient Scope Errors", the
 * recommended approach): every scope the call needs together with those already granted, both
 * the token's and the rest of what the borrower consented to for this client. A client that asks
 * for exactly this keeps its whole consent in the new grant and refresh token, so each later stage
 * needs a refresh, not another sign-in; the token endpoint still cuts every access token down to
 * the stage's scopes (src/auth/oauth/provider.ts), so naming them widens no token.
 */
export function stepUpScopes(needed: readonly Scope[], held: readonly Scope[], consented: readonly Scope[]): Scope[] {
  const all = new Set<Scope>([...needed, ...held, ...consented]);
  return SCOPES.filter((s) => all.has(s));
}

/** The tool names of every `tools/call` in a message or batch, by JSON-RPC id (for the call log). */
export function toolCallsById(body: unknown): Map<string | number, string> {
  const out = new Map<string | number, string>();
  for (const m of Array.isArray(body) ? body : [body]) {
    if (typeof m !== 'object' || m === null) continue;
    const msg = m as { method?: unknown; params?: { name?: unknown } | null; id?: unknown };
    if (msg.method === 'tools/call' && (typeof msg.id === 'string' || typeof msg.id === 'number')) {
      out.set(msg.id, typeof msg.params?.name === 'string' ? msg.params.name : '?');
    }
  }
  return out;
}
