import type { Collections } from './collections.js';
import type { BorrowerDoc, BorrowerStandingCopy, OperationalAgentDoc } from './documents.js';
import { agentLock } from './agent-lock.js';
import { changeBorrower, type BorrowerChange, type BorrowerDecision } from './borrower-changes.js';
import { replacesStanding, standingAfter } from './borrower-standing-copies.js';
import { withFencedDocument } from './fencing.js';

/*
 * Keeping the agents' copies of their borrower's standing in step (borrower-standing-copies.ts).
 * Why no agent keeps a "may spend" copy of a borrower that may not: a standing change writes the
 * borrower first (version v), then copies v onto every agent the borrower lists at v. A new agent
 * is inserted without a copy (its captures read the borrower), then listed on the borrower, and
 * only then given the standing of the version its listing read. So an agent listed at v gets v
 * (or later) from the change, and one listed after v copies v or later itself. Copies are only
 * replaced by later versions, so the two writers can land in either order.
 */

/**
 * changeBorrower for a change that may move the borrower's standing (status, suspended): once the
 * borrower is written, every one of its agents carries the new standing before this returns. A
 * re-run copies again even when the borrower needs no change, so it finishes a copy a crash cut short.
 */
export async function changeBorrowerStanding<R>(c: Collections, borrowerId: string, decide: (b: BorrowerDoc | null) => BorrowerDecision<R>): Promise<R> {
  const last: { b?: BorrowerDoc | null; change?: BorrowerChange | undefined } = {};
  const result = await changeBorrower(c, borrowerId, (b) => {
    const decision = decide(b);
    last.b = b;
    last.change = decision.change;
    return decision;
  });
  if (last.b) await copyStandingToAgents(c, last.b, standingAfter(last.b, last.change));
  return result;
}

/** Copies `standing` onto every agent `b` lists (a borrower older than the list: every agent naming it). */
async function copyStandingToAgents(c: Collections, b: BorrowerDoc, standing: BorrowerStandingCopy): Promise<void> {
  const ids = b.operationalAgentIds ?? (await c.operationalAgents.find({ borrowerId: b._id }, { projection: { _id: 1 } }).toArray()).map((a) => a._id);
  await Promise.all(ids.map((id) => copyStandingToAgent(c, id, b._id, standing)));
}

/** Writes `standing` onto one agent of `borrowerId` under the agent's lease, unless it already has that version or a later one. */
export function copyStandingToAgent(c: Collections, operationalAgentId: string, borrowerId: string, standing: BorrowerStandingCopy): Promise<void> {
  return withFencedDocument<OperationalAgentDoc, void>(c, c.operationalAgents, operationalAgentId, agentLock(operationalAgentId), async (agent, write) => {
    if (!agent || agent.borrowerId !== borrowerId || !replacesStanding(agent.borrowerStanding, standing)) return;
    await write.update({ $set: { borrowerStanding: standing } });
  });
}
