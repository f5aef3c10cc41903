import type { AgentKeyCopy, AgentKeyDoc, OperationalAgentDoc } from './documents.js';

/*
 * The copy of its keys an operational agent document carries (OperationalAgentDoc.keys), so a
 * capture reads the agent and its keys in one read. The key documents stay the truth for
 * everything else (grants, listings); the copy only has to refuse whatever they refuse. So a
 * revoked copy never turns active again, and writers revoke the copy before the key document.
 */

export type KeyToVerify = AgentKeyCopy & { operationalAgentId: string };

export function keyCopy(key: AgentKeyDoc, revoked = false): AgentKeyCopy {
  return { keyId: key._id, publicKey: key.publicKey, status: revoked ? 'revoked' : key.status, borrowerId: key.borrowerId, createdAt: key.createdAt };
}

/**
 * The copies with `key` in them, revoked when `revoked` (or when the key document says so); an
 * entry already there is only ever revoked, never replaced. Null when nothing changes.
 */
export function withKeyCopied(copies: readonly AgentKeyCopy[], key: AgentKeyDoc, revoked: boolean): AgentKeyCopy[] | null {
  const revoke = revoked || key.status === 'revoked';
  const at = copies.findIndex((k) => k.keyId === key._id);
  if (at < 0) return [...copies, keyCopy(key, revoke)];
  if (!revoke || copies[at]!.status === 'revoked') return null;
  return copies.map((k, i) => (i === at ? { ...k, status: 'revoked' as const } : k));
}

/** Every copy revoked (the whole agent was); null when none was active. */
export function allCopiesRevoked(copies: readonly AgentKeyCopy[]): AgentKeyCopy[] | null {
  if (copies.every((k) => k.status === 'revoked')) return null;
  return copies.map((k) => ({ ...k, status: 'revoked' as const }));
}

/** The keys a capture checks, from the agent's copy; null for an older document that has none. */
export function copiedKeys(agent: Pick<OperationalAgentDoc, '_id' | 'keys'>): KeyToVerify[] | null {
  return agent.keys ? agent.keys.map((k) => ({ ...k, operationalAgentId: agent._id })) : null;
}
