import type { Collections } from './collections.js';
import type { AgentGrant, AgentKeyDoc, OperationalAgentDoc } from './documents.js';
import { changeBorrower } from './borrower-changes.js';
import { withFencedDocument } from './fencing.js';
import { insertOnce } from './claim.js';
import { isDuplicateKey } from './mongo.js';
import { allCopiesRevoked, copiedKeys, keyCopy, withKeyCopied, type KeyToVerify } from './agent-key-copies.js';
import { agentLock } from './agent-lock.js';
import { standingAfter } from './borrower-standing-copies.js';
import { copyStandingToAgent } from './borrower-standing.js';

/*
 * Who belongs to whom is kept as id lists on the parent (borrower -> operational agents -> agent
 * keys), so the payment paths fetch each document by _id: FerretDB v1 answers any other filter
 * by scanning the whole collection. A parent stored before the lists existed has none; it is read
 * the old way and gets its list on its next addition.
 */

const byCreatedAt = (a: { createdAt: Date }, b: { createdAt: Date }) => a.createdAt.getTime() - b.createdAt.getTime();

async function byIds<T>(ids: string[], find: (id: string) => Promise<T | null>): Promise<T[]> {
  return (await Promise.all(ids.map(find))).filter((d): d is Awaited<T> => d !== null) as T[];
}

/**
 * Inserts the operational agent once, then lists it on its borrower, then copies the standing that
 * listing read onto it. Every step is idempotent. The agent is inserted without a standing copy, so
 * until the copy lands its captures read the borrower (borrower-standing.ts says why this order).
 */
export async function ensureOperationalAgent(c: Collections, doc: OperationalAgentDoc): Promise<OperationalAgentDoc> {
  const { borrowerStanding: _fromTheListing, ...fields } = doc;
  const stored = await insertOnce(c.operationalAgents, { ...fields, agentKeyIds: doc.agentKeyIds ?? [], keys: doc.keys ?? [] });
  const legacy = await legacyAgentIds(c, doc.borrowerId);
  const standing = await changeBorrower(c, doc.borrowerId, (b) => {
    const ids = b?.operationalAgentIds ?? legacy;
    const listed = b?.operationalAgentIds !== undefined && ids.includes(doc._id);
    const change = b && !listed ? { operationalAgentIds: ids.includes(doc._id) ? ids : [...ids, doc._id] } : undefined;
    return { result: b ? standingAfter(b, change) : null, ...(change ? { change } : {}) };
  });
  if (standing) await copyStandingToAgent(c, doc._id, doc.borrowerId, standing);
  return stored;
}

/** The ids a borrower without a list had, found the old way (only read for such a borrower). */
async function legacyAgentIds(c: Collections, borrowerId: string): Promise<string[]> {
  const b = await c.borrowers.findOne({ _id: borrowerId });
  if (!b || b.operationalAgentIds !== undefined) return [];
  return (await c.operationalAgents.find({ borrowerId }).toArray()).map((a) => a._id);
}

export function findOperationalAgent(c: Collections, operationalAgentId: string): Promise<OperationalAgentDoc | null> {
  return c.operationalAgents.findOne({ _id: operationalAgentId });
}

export async function listOperationalAgents(c: Collections, borrowerId: string): Promise<OperationalAgentDoc[]> {
  const ids = (await c.borrowers.findOne({ _id: borrowerId }))?.operationalAgentIds;
  const agents = ids ? await byIds(ids, (id) => c.operationalAgents.findOne({ _id: id })) : await c.operationalAgents.find({ borrowerId }).toArray();
  return agents.sort(byCreatedAt);
}

/** The operational agent's keys, revoked ones included; none for an unknown agent. */
export async function listAgentKeys(c: Collections, operationalAgentId: string): Promise<AgentKeyDoc[]> {
  const agent = await c.operationalAgents.findOne({ _id: operationalAgentId });
  return agent ? keyDocsOf(c, agent) : [];
}

async function keyDocsOf(c: Collections, agent: OperationalAgentDoc): Promise<AgentKeyDoc[]> {
  const keys = agent.agentKeyIds
    ? await byIds(agent.agentKeyIds, (id) => c.agentKeys.findOne({ _id: id }))
    : await c.agentKeys.find({ operationalAgentId: agent._id }).toArray();
  return keys.sort(byCreatedAt);
}

/**
 * What a capture checks of an operational agent's keys (revoked ones included; none for an
 * unknown agent), from the copy the agent document carries: no read. An older agent document
 * without the copy has its keys read as listAgentKeys does.
 */
export async function keysToVerify(c: Collections, agent: OperationalAgentDoc | null): Promise<KeyToVerify[]> {
  if (!agent) return [];
  const copied = copiedKeys(agent);
  if (copied) return copied.sort(byCreatedAt);
  return (await keyDocsOf(c, agent)).map((k) => ({ ...keyCopy(k), operationalAgentId: k.operationalAgentId }));
}

export async function listBorrowerAgentKeys(c: Collections, borrowerId: string): Promise<AgentKeyDoc[]> {
  const agents = await listOperationalAgents(c, borrowerId);
  return (await Promise.all(agents.map((a) => listAgentKeys(c, a._id)))).flat().sort(byCreatedAt);
}

export function findAgentKey(c: Collections, keyId: string): Promise<AgentKeyDoc | null> {
  return c.agentKeys.findOne({ _id: keyId });
}

/** Inserts the key once (a retried activity finds it), then lists it, and its copy, on its operational agent. */
export async function ensureAgentKey(c: Collections, doc: AgentKeyDoc): Promise<void> {
  let stored = doc;
  try {
    await c.agentKeys.insertOne(doc);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    stored = (await findAgentKey(c, doc._id)) ?? doc;
  }
  const agentRevoked = await withFencedDocument(c, c.operationalAgents, doc.operationalAgentId, agentLock(doc.operationalAgentId), async (agent, write) => {
    if (!agent) return false;
    const revoked = agent.revokedAt !== undefined;
    const ids = agent.agentKeyIds ?? (await c.agentKeys.find({ operationalAgentId: agent._id }).toArray()).map((k) => k._id);
    const listed = agent.agentKeyIds !== undefined && ids.includes(doc._id);
    // A key of a revoked agent is copied revoked in this very write, so no capture ever accepts it.
    const keys = agent.keys && withKeyCopied(agent.keys, stored, revoked);
    if (!listed || keys) {
      await write.update({ $set: { ...(listed ? {} : { agentKeyIds: ids.includes(doc._id) ? ids : [...ids, doc._id] }), ...(keys ? { keys } : {}) } });
    }
    return revoked;
  });
  // A grant signed before the borrower revoked the whole agent lands revoked: the agent gets no new keys.
  if (agentRevoked) await revokeAgentKey(c, doc._id, new Date());
}

export type KeyChange = 'changed' | 'unchanged' | 'not_found';

/**
 * Revokes one agent key: the next prepare cannot use it and the next capture of a voucher it
 * signed is refused with agent_key_revoked. The copy on its agent, which captures read, is revoked
 * first: a crash in between leaves the key refused by captures, and a re-run finishes the job.
 */
export async function revokeAgentKey(c: Collections, keyId: string, now: Date): Promise<KeyChange> {
  const key = await findAgentKey(c, keyId);
  if (!key) return 'not_found';
  await revokeKeyCopies(c, key.operationalAgentId, [key]);
  return revokeKeyDoc(c, keyId, now);
}

/**
 * Revokes the copies of some keys of one operational agent (listing a key there if it was not), in
 * one write; nothing for an agent without copies.
 */
export function revokeKeyCopies(c: Collections, operationalAgentId: string, keys: readonly AgentKeyDoc[]): Promise<void> {
  return withFencedDocument<OperationalAgentDoc, void>(c, c.operationalAgents, operationalAgentId, agentLock(operationalAgentId), async (agent, write) => {
    if (!agent?.keys) return;
    const copies = keys.reduce((acc, k) => withKeyCopied(acc, k, true) ?? acc, agent.keys);
    const missing = keys.map((k) => k._id).filter((id) => agent.agentKeyIds && !agent.agentKeyIds.includes(id));
    if (copies === agent.keys && missing.length === 0) return;
    await write.update({ $set: { keys: copies, ...(missing.length > 0 ? { agentKeyIds: [...agent.agentKeyIds!, ...missing] } : {}) } });
  });
}

/** The key document's own revocation, under the key's lease, so it cannot race a limit change. */
function revokeKeyDoc(c: Collections, keyId: string, now: Date): Promise<KeyChange> {
  return withFencedDocument<AgentKeyDoc, KeyChange>(c, c.agentKeys, keyId, `agent-key:${keyId}`, async (key, write) => {
    if (!key) return 'not_found';
    if (key.status === 'revoked') return 'unchanged';
    await write.update({ $set: { status: 'revoked', revokedAt: now } });
    return 'changed';
  });
}

/**
 * Revokes the operational agent and every key it has; returns the keys this call revoked. The mark
 * and the revoked copies of its keys land in one write, before the key documents: captures refuse
 * the agent's vouchers from that write on, and a re-run after a crash revokes the rest.
 */
export async function revokeOperationalAgent(c: Collections, operationalAgentId: string, now: Date): Promise<{ change: KeyChange; revokedKeyIds: string[] }> {
  const change = await withFencedDocument<OperationalAgentDoc, KeyChange>(c, c.operationalAgents, operationalAgentId, agentLock(operationalAgentId), async (agent, write) => {
    if (!agent) return 'not_found';
    const keys = agent.keys && allCopiesRevoked(agent.keys);
    if (agent.revokedAt && !keys) return 'unchanged';
    await write.update({ $set: { ...(agent.revokedAt ? {} : { revokedAt: now }), ...(keys ? { keys } : {}) } });
    return agent.revokedAt ? 'unchanged' : 'changed';
  });
  if (change === 'not_found') return { change, revokedKeyIds: [] };
  // After the mark: a key added meanwhile is either listed here or revoked by ensureAgentKey.
  // Every listed key's copy is revoked already (an older document has none), so only the documents are left.
  const keys = await listAgentKeys(c, operationalAgentId);
  const revoked = await Promise.all(keys.map(async (k) => ((await revokeKeyDoc(c, k._id, now)) === 'changed' ? k._id : null)));
  return { change, revokedKeyIds: revoked.filter((id): id is string => id !== null) };
}

/** Revokes the operational agent's active keys other than `keepKeyId`; returns the ids it revoked. */
export async function revokeOtherKeys(c: Collections, operationalAgentId: string, keepKeyId: string, now: Date): Promise<string[]> {
  const others = (await listAgentKeys(c, operationalAgentId)).filter((k) => k.status === 'active' && k._id !== keepKeyId);
  if (others.length === 0) return [];
  await revokeKeyCopies(c, operationalAgentId, others);
  await Promise.all(others.map((k) => revokeKeyDoc(c, k._id, now)));
  return others.map((k) => k._id);
}

export type GrantChange = 'changed' | 'not_found' | 'revoked' | 'grant_changed';

/**
 * Replaces an active key's grant with `next`, only if its grant is still `expectedNonce` (the one
 * the borrower saw when choosing the new limits). The caller checks that `next` only tightens it.
 */
export function replaceAgentKeyGrant(c: Collections, keyId: string, expectedNonce: string, next: AgentGrant): Promise<GrantChange> {
  return withFencedDocument<AgentKeyDoc, GrantChange>(c, c.agentKeys, keyId, `agent-key:${keyId}`, async (key, write) => {
    if (!key) return 'not_found';
    if (key.status !== 'active') return 'revoked';
    if (key.grant?.nonce !== expectedNonce) return 'grant_changed';
    await write.update({ $set: { grant: next } });
    return 'changed';
  });
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
