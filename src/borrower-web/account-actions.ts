import { bytesToHex, getAddress, verifyTypedData } from 'viem';
import type { BorrowerWebDeps } from './deps.js';
import { endBorrowerGrants } from '../store/borrower-grants.js';
import { borrowerDomainInput } from '../agents/context.js';
import { ApiError } from '../domain/errors.js';
import { isCanonicalSignature } from '../domain/signature.js';
import { agentGrantTypedData, typedDataToJson } from '../domain/typed-data.js';
import { decodePublicKey, randomNonce } from '@credit-facilitator/wire/voucher';
import type { AgentGrant, AgentKeyDoc } from '../store/documents.js';
import { findAgentKey, findOperationalAgent, replaceAgentKeyGrant, revokeAgentKey, revokeOperationalAgent } from '../store/operational-agents.js';
import { sessionBorrower } from './account-view.js';
import type { BorrowerSession } from './session.js';

/*
 * What the borrower does on their page. Every action re-reads the key or agent and checks it is
 * the signed-in borrower's; another borrower's id answers 404, exactly like an unknown one.
 */

async function ownKey(deps: BorrowerWebDeps, s: BorrowerSession, keyId: string): Promise<AgentKeyDoc> {
  const key = await findAgentKey(deps.store.c, keyId);
  if (!key || key.borrowerId !== s.borrowerId) throw ApiError.notFound('agent key');
  return key;
}

export async function revokeKey(deps: BorrowerWebDeps, s: BorrowerSession, keyId: string) {
  const key = await ownKey(deps, s, keyId);
  const change = await revokeAgentKey(deps.store.c, key._id, new Date(deps.nowMs()));
  deps.logger.info('borrower revoked an agent key', { borrowerId: s.borrowerId, keyId: key._id, changed: change === 'changed' });
  return { key_id: key._id, status: 'revoked' as const, changed: change === 'changed' };
}

/**
 * Revokes the agent and its keys, and ends the OAuth access of the client it registered through:
 * every grant that client holds for this borrower (the agent's tokens name none of them apart), so
 * its tokens stop at their next call and it needs the borrower's wallet again for new ones.
 * Grants are ended on every call, so a retry after a failure in between finishes the job.
 */
export async function revokeAgent(deps: BorrowerWebDeps, s: BorrowerSession, operationalAgentId: string) {
  const agent = await findOperationalAgent(deps.store.c, operationalAgentId);
  if (!agent || agent.borrowerId !== s.borrowerId) throw ApiError.notFound('operational agent');
  const out = await revokeOperationalAgent(deps.store.c, agent._id, new Date(deps.nowMs()));
  const endedGrants = await endBorrowerGrants(deps.store.db, s.borrowerId, deps.nowMs(), agent.clientId);
  deps.logger.info('borrower revoked an operational agent', { borrowerId: s.borrowerId, operationalAgentId: agent._id, revokedKeys: out.revokedKeyIds.length, endedGrants });
  return { operational_agent_id: agent._id, status: 'revoked' as const, changed: out.change === 'changed', revoked_key_ids: out.revokedKeyIds, ended_grants: endedGrants };
}

/**
 * Disconnects one OAuth client from the borrower: ends every grant it holds for them (its tokens
 * stop at their next call; new ones need the wallet's consent again). Its agents and keys stay as
 * they are. A client with no live grant for this borrower answers 404, whoever else it serves.
 */
export async function disconnectClient(deps: BorrowerWebDeps, s: BorrowerSession, clientId: string) {
  const endedGrants = await endBorrowerGrants(deps.store.db, s.borrowerId, deps.nowMs(), clientId);
  if (endedGrants === 0) throw ApiError.notFound('connected client');
  deps.logger.info('borrower disconnected an OAuth client', { borrowerId: s.borrowerId, clientId, endedGrants });
  return { client_id: clientId, status: 'disconnected' as const, ended_grants: endedGrants };
}

export interface LimitChoice {
  per_payment_limit: string;
  daily_limit: string;
}

/** The key's active grant, and the new limits checked to only tighten it. */
function lowering(key: AgentKeyDoc, next: LimitChoice): AgentGrant {
  if (key.status !== 'active') throw new ApiError('INVALID_REQUEST', 'This agent key is revoked; its limits no longer matter.', { status: 409 });
  const grant = key.grant;
  if (!grant) throw new ApiError('INVALID_REQUEST', 'This agent key has no signed grant to lower.', { status: 409 });
  const per = BigInt(next.per_payment_limit);
  const daily = BigInt(next.daily_limit);
  const fields = [
    ...(per > BigInt(grant.perPaymentLimit) ? [{ path: 'per_payment_limit', message: `must not exceed the current ${grant.perPaymentLimit}` }] : []),
    ...(daily > BigInt(grant.dailyLimit) ? [{ path: 'daily_limit', message: `must not exceed the current ${grant.dailyLimit}` }] : []),
    ...(per > daily ? [{ path: 'per_payment_limit', message: 'must not exceed daily_limit' }] : []),
  ];
  if (fields.length) throw ApiError.invalidRequest(fields, 'The page only lowers limits; to raise one, the agent registers a new key (rotate_agent_key) for you to sign.');
  if (per === BigInt(grant.perPaymentLimit) && daily === BigInt(grant.dailyLimit)) {
    throw ApiError.invalidRequest([{ path: 'daily_limit', message: 'lower at least one limit' }], 'These are the current limits.');
  }
  return grant;
}

function grantTypedData(deps: BorrowerWebDeps, key: AgentKeyDoc, grant: AgentGrant, next: LimitChoice, nonce: `0x${string}`) {
  return agentGrantTypedData(borrowerDomainInput(deps), {
    borrowerId: key.borrowerId,
    operationalAgentId: key.operationalAgentId,
    agentPublicKeyHex: bytesToHex(decodePublicKey(key.publicKey) as Uint8Array),
    perPaymentLimit: BigInt(next.per_payment_limit),
    dailyLimit: BigInt(next.daily_limit),
    // Lowering keeps the grant's end: a later end would widen it.
    expiresAt: grant.expiresAt,
    nonce,
  });
}

/** The AgentGrant (same key, lower limits, a fresh nonce) for the borrower's wallet to sign. */
export async function lowerLimitTypedData(deps: BorrowerWebDeps, s: BorrowerSession, keyId: string, next: LimitChoice) {
  const key = await ownKey(deps, s, keyId);
  const grant = lowering(key, next);
  const nonce = randomNonce();
  return { typed_data: typedDataToJson(grantTypedData(deps, key, grant, next, nonce)), nonce, expires_at: grant.expiresAt };
}

/**
 * Applies a signed lower-limit AgentGrant: the borrower's wallet signed exactly this grant for this
 * key, and it still only tightens the key's current one. The next prepare uses the new limits.
 */
export async function lowerLimit(deps: BorrowerWebDeps, s: BorrowerSession, keyId: string, next: LimitChoice & { nonce: `0x${string}`; signature: string }) {
  const b = await sessionBorrower(deps, s);
  const key = await ownKey(deps, s, keyId);
  const grant = lowering(key, next);
  if (next.nonce.toLowerCase() === grant.nonce.toLowerCase()) throw ApiError.invalidRequest([{ path: 'nonce', message: 'must be a fresh nonce' }]);
  const typed = grantTypedData(deps, key, grant, next, next.nonce);
  let valid = false;
  try {
    valid = isCanonicalSignature(next.signature) && (await verifyTypedData({ ...typed, address: getAddress(b.walletAddress as string), signature: next.signature }));
  } catch {
    valid = false;
  }
  if (!valid) throw new ApiError('INVALID_REQUEST', 'The signature is not your wallet\'s AgentGrant for these limits; sign again with the wallet you signed in with.');
  const change = await replaceAgentKeyGrant(deps.store.c, key._id, grant.nonce, {
    perPaymentLimit: next.per_payment_limit,
    dailyLimit: next.daily_limit,
    expiresAt: grant.expiresAt,
    nonce: next.nonce.toLowerCase(),
    signature: next.signature.toLowerCase(),
  });
  if (change === 'revoked') throw new ApiError('INVALID_REQUEST', 'This agent key was revoked meanwhile.', { status: 409 });
  if (change === 'grant_changed') throw new ApiError('INVALID_REQUEST', 'The key\'s limits changed meanwhile; reload and sign again.', { status: 409 });
  if (change === 'not_found') throw ApiError.notFound('agent key');
  deps.logger.info('borrower lowered an agent key limit', { borrowerId: s.borrowerId, keyId: key._id });
  return { key_id: key._id, per_payment_limit: next.per_payment_limit, daily_limit: next.daily_limit, expires_at: grant.expiresAt };
}
