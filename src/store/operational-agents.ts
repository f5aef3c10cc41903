import type { Collections } from './collections.js';
import type { AgentKeyDoc, OperationalAgentDoc } from './documents.js';
import { insertOnce, isDuplicateKey } from './mongo.js';

export async function ensureOperationalAgent(c: Collections, doc: OperationalAgentDoc): Promise<OperationalAgentDoc> {
  return insertOnce(c.operationalAgents, doc);
}

export function listOperationalAgents(c: Collections, borrowerId: string): Promise<OperationalAgentDoc[]> {
  return c.operationalAgents.find({ borrowerId }).sort({ createdAt: 1 }).toArray();
}

export function listBorrowerAgentKeys(c: Collections, borrowerId: string): Promise<AgentKeyDoc[]> {
  return c.agentKeys.find({ borrowerId }).sort({ createdAt: 1 }).toArray();
}

export function findAgentKey(c: Collections, keyId: string): Promise<AgentKeyDoc | null> {
  return c.agentKeys.findOne({ _id: keyId });
}

/** Inserts the key once (a retried activity finds it). */
export async function ensureAgentKey(c: Collections, doc: AgentKeyDoc): Promise<void> {
  try {
    await c.agentKeys.insertOne(doc);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
}

/** Revokes the operational agent's active keys other than `keepKeyId`; returns the ids it revoked. */
export async function revokeOtherKeys(c: Collections, operationalAgentId: string, keepKeyId: string, now: Date): Promise<string[]> {
  const others = await c.agentKeys.find({ operationalAgentId, status: 'active', _id: { $ne: keepKeyId } }).toArray();
  const ids = others.map((k) => k._id);
  if (ids.length > 0) {
    await c.agentKeys.updateMany({ _id: { $in: ids }, status: 'active' }, { $set: { status: 'revoked', revokedAt: now } });
  }
  return ids;
}

export type HandleClaim = 'claimed' | 'taken';

/** The handles collection's unique _id decides who owns a handle. */
export async function claimHandleRecord(c: Collections, handle: string, borrowerId: string, now: Date): Promise<HandleClaim> {
  try {
    await c.handles.insertOne({ _id: handle, borrowerId, claimedAt: now });
    return 'claimed';
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const owner = await c.handles.findOne({ _id: handle });
  return owner?.borrowerId === borrowerId ? 'claimed' : 'taken';
}
