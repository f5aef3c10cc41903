import type { BorrowerChange } from './borrower-changes.js';
import type { BorrowerDoc, BorrowerStandingCopy, OperationalAgentDoc } from './documents.js';

/*
 * The copy of its borrower's standing an operational agent document carries
 * (OperationalAgentDoc.borrowerStanding), so a capture reads the agent and not the borrower. The
 * borrower document stays the truth: a capture trusts the copy only when it says the borrower may
 * spend, and reads the borrower otherwise. So a copy only has to stop saying "may spend" as soon as
 * the borrower stops, and writers keep it in step with the borrower's `fence` as its version: a
 * copy is only ever replaced by one of a later version, whatever order the writers land in.
 */

/** The only standing that may spend: ACTIVE and not suspended (holdCredit's and the rules' test). */
export function maySpend(s: Pick<BorrowerStandingCopy, 'status' | 'suspended'>): boolean {
  return s.status === 'ACTIVE' && !s.suspended;
}

/**
 * The standing of `b` once `change` is applied by changeBorrower, labelled with the fence that
 * version carries: a written change increments `fence`, no change leaves it.
 */
export function standingAfter(b: BorrowerDoc, change?: BorrowerChange): BorrowerStandingCopy {
  const next = { ...b, ...change };
  const written = change !== undefined && Object.keys(change).length > 0;
  return { status: next.status, suspended: !!next.suspended, version: (b.fence ?? 0) + (written ? 1 : 0) };
}

/** Whether `next` replaces the agent's copy: only a later version does (an equal one is the same standing). */
export function replacesStanding(current: BorrowerStandingCopy | undefined, next: BorrowerStandingCopy): boolean {
  return current === undefined || next.version > current.version;
}

/**
 * The borrower as the rules see it, from the agent's copy, when the copy says it may spend and the
 * voucher names the agent's own borrower; null means "read the borrower" (no copy, another standing).
 */
export function borrowerFromCopy(agent: Pick<OperationalAgentDoc, 'borrowerId' | 'borrowerStanding'>, voucherBorrowerId: string): { borrowerId: string; status: 'ACTIVE' } | null {
  const s = agent.borrowerStanding;
  return s && maySpend(s) && agent.borrowerId === voucherBorrowerId ? { borrowerId: agent.borrowerId, status: 'ACTIVE' } : null;
}
