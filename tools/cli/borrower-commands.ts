import { endBorrowerGrants } from '../../src/store/borrower-grants.js';
import { isUuid } from '@credit-facilitator/wire/ids';
import { findBorrower, setBorrowerSuspension } from '../../src/store/borrowers.js';
import { findAgentKey, listBorrowerAgentKeys, listOperationalAgents, revokeAgentKey } from '../../src/store/operational-agents.js';
import type { CliContext } from './context.js';
import { UsageError } from './output.js';

async function requireBorrower(ctx: CliContext, borrowerId: string | undefined) {
  if (!borrowerId || !isUuid(borrowerId)) throw new UsageError('--borrower <borrowerId> is required');
  const b = await findBorrower(ctx.store.c, borrowerId.toLowerCase());
  if (!b) throw new UsageError(`no borrower ${borrowerId}`);
  return b;
}

/** What an operator needs before acting on a borrower: status, credit, agents and their keys. */
export async function borrowerShow(ctx: CliContext, f: { borrower?: string }) {
  const b = await requireBorrower(ctx, f.borrower);
  const [agents, keys] = await Promise.all([listOperationalAgents(ctx.store.c, b._id), listBorrowerAgentKeys(ctx.store.c, b._id)]);
  return {
    borrowerId: b._id,
    status: b.status,
    stage: b.stage ?? null,
    handle: b.handle ?? null,
    walletAddress: b.walletAddress ?? null,
    suspended: b.suspended ? { at: b.suspended.at.toISOString(), reason: b.suspended.reason } : null,
    credit: { limit: String(b.creditLimit), available: String(b.available), held: String(Object.values(b.holds ?? {}).reduce((s, v) => s + v, 0)), debt: String(b.debt) },
    operationalAgents: agents.map((a) => ({
      operationalAgentId: a._id,
      label: a.label ?? null,
      keys: keys.filter((k) => k.operationalAgentId === a._id).map((k) => ({ keyId: k._id, status: k.status, ...(k.revokedAt ? { revokedAt: k.revokedAt.toISOString() } : {}) })),
    })),
  };
}

/**
 * Stops a borrower spending at once: the next prepare and the next capture refuse with
 * borrower_not_active (vouchers prepared before included). Payments already captured settle.
 * Every OAuth grant of the borrower ends too: their agents' tokens stop at the next call and need
 * the borrower's wallet to sign in again (which stays possible while suspended, e.g. to repay).
 */
export async function borrowerSuspend(ctx: CliContext, f: { borrower?: string; reason?: string }) {
  const b = await requireBorrower(ctx, f.borrower);
  if (!f.reason) throw new UsageError('--reason <text> is required: it is shown to the borrower and kept for audit');
  const change = await setBorrowerSuspension(ctx.store.c, b._id, { at: new Date(), reason: f.reason.slice(0, 500) });
  const endedGrants = await endBorrowerGrants(ctx.store.db, b._id, Date.now());
  return { borrowerId: b._id, suspended: true, changed: change === 'changed', endedGrants };
}

export async function borrowerReinstate(ctx: CliContext, f: { borrower?: string }) {
  const b = await requireBorrower(ctx, f.borrower);
  const change = await setBorrowerSuspension(ctx.store.c, b._id, null);
  return { borrowerId: b._id, suspended: false, changed: change === 'changed' };
}

/** The kill switch for one agent key: the next capture of a voucher it signed is refused with agent_key_revoked. */
export async function agentKeyRevoke(ctx: CliContext, f: { key?: string }) {
  if (!f.key) throw new UsageError('--key <agentKeyId> is required: find it with "borrower show"');
  const k = await findAgentKey(ctx.store.c, f.key);
  if (!k) throw new UsageError(`no agent key ${f.key}`);
  const change = await revokeAgentKey(ctx.store.c, k._id, new Date());
  return { keyId: k._id, status: 'revoked', changed: change === 'changed' };
}
