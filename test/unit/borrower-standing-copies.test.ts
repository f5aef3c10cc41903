import assert from 'node:assert/strict';
import { borrowerFromCopy, maySpend, replacesStanding, standingAfter } from '../../src/store/borrower-standing-copies.js';
import type { BorrowerDoc, BorrowerStandingCopy } from '../../src/store/documents.js';

const AT = new Date('2026-01-01T00:00:00Z');
const borrower = (over: Partial<BorrowerDoc> = {}): BorrowerDoc => ({
  _id: 'b1',
  status: 'ACTIVE',
  creditLimit: 100,
  available: 100,
  holds: {},
  debt: 0,
  operationalAgentIds: [],
  fence: 5,
  createdAt: AT,
  updatedAt: AT,
  ...over,
});
const copy = (status: string, suspended: boolean, version: number): BorrowerStandingCopy => ({ status, suspended, version });

describe("borrower standing copies: what a capture reads of an agent's borrower", () => {
  it('only ACTIVE and not suspended may spend', () => {
    assert.equal(maySpend(copy('ACTIVE', false, 1)), true);
    assert.equal(maySpend(copy('ACTIVE', true, 1)), false);
    assert.equal(maySpend(copy('ONBOARDING', false, 1)), false);
    assert.equal(maySpend(copy('SUSPENDED', false, 1)), false);
  });

  it("labels the standing after a change with the fence the written version carries; no change keeps the fence", () => {
    assert.deepEqual(standingAfter(borrower()), copy('ACTIVE', false, 5));
    assert.deepEqual(standingAfter(borrower(), {}), copy('ACTIVE', false, 5));
    assert.deepEqual(standingAfter(borrower(), { suspended: { at: AT, reason: 'x' } }), copy('ACTIVE', true, 6));
    assert.deepEqual(standingAfter(borrower({ suspended: { at: AT, reason: 'x' } }), { suspended: null }), copy('ACTIVE', false, 6));
    assert.deepEqual(standingAfter(borrower({ status: 'ONBOARDING' }), { status: 'ACTIVE', stage: 'ACTIVE' }), copy('ACTIVE', false, 6));
    assert.deepEqual(standingAfter(borrower({ fence: undefined })), copy('ACTIVE', false, 0));
  });

  it('a copy is only replaced by a later version', () => {
    assert.equal(replacesStanding(undefined, copy('ACTIVE', false, 0)), true);
    assert.equal(replacesStanding(copy('ACTIVE', true, 6), copy('ACTIVE', false, 7)), true);
    assert.equal(replacesStanding(copy('ACTIVE', true, 6), copy('ACTIVE', false, 5)), false);
    assert.equal(replacesStanding(copy('ACTIVE', true, 6), copy('ACTIVE', true, 6)), false);
  });

  it("stands in for the borrower only when it says the voucher's own borrower may spend", () => {
    const agent = (s?: BorrowerStandingCopy) => ({ borrowerId: 'b1', ...(s ? { borrowerStanding: s } : {}) });
    assert.deepEqual(borrowerFromCopy(agent(copy('ACTIVE', false, 3)), 'b1'), { borrowerId: 'b1', status: 'ACTIVE' });
    assert.equal(borrowerFromCopy(agent(copy('ACTIVE', false, 3)), 'B1'), null, 'another spelling is read, as findBorrower would');
    assert.equal(borrowerFromCopy(agent(copy('ACTIVE', false, 3)), 'b2'), null);
    assert.equal(borrowerFromCopy(agent(copy('ACTIVE', true, 3)), 'b1'), null);
    assert.equal(borrowerFromCopy(agent(copy('ONBOARDING', false, 3)), 'b1'), null);
    assert.equal(borrowerFromCopy(agent(), 'b1'), null);
  });
});

/*
 * A model of the writers of borrower-standing.ts, every interleaving of their store steps (each
 * step one atomic command: a fenced borrower write, a write under the agent's lease). A standing
 * change writes the borrower, then copies onto the agents it listed; a new agent is inserted
 * without a copy, listed, then given the standing its listing read.
 */
type Rule = (current: BorrowerStandingCopy | undefined, next: BorrowerStandingCopy) => boolean;
interface Model {
  b: BorrowerDoc;
  agent: { borrowerStanding?: BorrowerStandingCopy } | null;
}
type Step = (m: Model) => void;

function copyOnto(m: Model, s: BorrowerStandingCopy, rule: Rule): void {
  if (m.agent && rule(m.agent.borrowerStanding, s)) m.agent.borrowerStanding = s;
}

function write(m: Model, change: Partial<BorrowerDoc> | undefined): void {
  if (change && Object.keys(change).length > 0) m.b = { ...m.b, ...change, fence: (m.b.fence ?? 0) + 1 };
}

/** changeBorrowerStanding: the borrower (one fenced write), then the copy onto the agent if the borrower listed it. */
function standingChange(change: (b: BorrowerDoc) => Partial<BorrowerDoc> | undefined, rule: Rule): Step[] {
  let s: BorrowerStandingCopy;
  let listed: string[] = [];
  return [
    (m) => {
      const c = change(m.b);
      s = standingAfter(m.b, c);
      listed = m.b.operationalAgentIds ?? [];
      write(m, c);
    },
    (m) => {
      if (listed.includes('a2')) copyOnto(m, s, rule);
    },
  ];
}

/** ensureOperationalAgent: insert without a copy, list it (the listing's read gives the standing), copy. */
function agentCreation(rule: Rule): Step[] {
  let s: BorrowerStandingCopy;
  return [
    (m) => {
      m.agent = {};
    },
    (m) => {
      const ids = m.b.operationalAgentIds ?? [];
      const c = ids.includes('a2') ? undefined : { operationalAgentIds: [...ids, 'a2'] };
      s = standingAfter(m.b, c);
      write(m, c);
    },
    (m) => copyOnto(m, s, rule),
  ];
}

/** Every interleaving of the processes' steps, each process's own steps in order. */
function* interleavings(procs: number[]): Generator<[number, number][]> {
  const total = procs.reduce((a, n) => a + n, 0);
  const at = procs.map(() => 0);
  const path: [number, number][] = [];
  function* go(): Generator<[number, number][]> {
    if (path.length === total) return yield [...path];
    for (let p = 0; p < procs.length; p++) {
      if (at[p]! >= procs[p]!) continue;
      path.push([p, at[p]!]);
      at[p]!++;
      yield* go();
      at[p]!--;
      path.pop();
    }
  }
  yield* go();
}

const suspendIt = (b: BorrowerDoc) => (b.suspended ? undefined : { suspended: { at: AT, reason: 'x' } });
const reinstateIt = (b: BorrowerDoc) => (b.suspended ? { suspended: null } : undefined);
const activateIt = () => ({ status: 'ACTIVE', stage: 'ACTIVE' as const });
const capturePays = (m: Model) => borrowerFromCopy({ borrowerId: 'b1', ...m.agent }, 'b1') !== null;

/**
 * Runs every interleaving and returns the ones that break the copy's promise: once the suspension
 * returned (and before the reinstatement started), no capture may pay from the copy; and at the end
 * the new agent carries the borrower's final standing as far as "may spend" goes.
 */
function violations(rule: Rule, start: BorrowerDoc, withReinstatement: boolean, firstChange: (b: BorrowerDoc) => Partial<BorrowerDoc> | undefined = suspendIt): string[] {
  const bad: string[] = [];
  const make = () => [standingChange(firstChange, rule), agentCreation(rule), ...(withReinstatement ? [standingChange(reinstateIt, rule)] : [])];
  for (const order of interleavings(make().map((p) => p.length))) {
    // The reinstatement starts only once the suspension returned (an operator's later call).
    if (withReinstatement && order.findIndex(([p]) => p === 2) < order.findIndex(([p, i]) => p === 0 && i === 1)) continue;
    const procs = make();
    const m: Model = { b: { ...start }, agent: null };
    let suspensionReturned = false;
    let reinstating = false;
    for (const [p, i] of order) {
      procs[p]![i]!(m);
      if (p === 0 && i === procs[0]!.length - 1) suspensionReturned = true;
      if (p === 2) reinstating = true;
      if (firstChange === suspendIt && suspensionReturned && !reinstating && capturePays(m)) bad.push(`${JSON.stringify(order)}: a capture pays after the suspension returned`);
    }
    const final = m.agent?.borrowerStanding;
    if (!final || maySpend(final) !== maySpend({ status: m.b.status, suspended: !!m.b.suspended })) bad.push(`${JSON.stringify(order)}: ends with ${JSON.stringify(final)} on ${JSON.stringify(m.b)}`);
  }
  return bad;
}

describe('borrower standing copies: every interleaving of a standing change and an agent creation', () => {
  const later: Rule = replacesStanding;
  const lastWriterWins: Rule = () => true;

  it('an agent created while its borrower is suspended never lets a capture pay after the suspension returned, and ends suspended', () => {
    assert.deepEqual(violations(later, borrower(), false), []);
    assert.deepEqual(violations(later, borrower({ operationalAgentIds: undefined }), false), [], 'a borrower older than its agent list');
  });

  it('nor when the borrower is reinstated right after: the agent ends able to pay', () => {
    assert.deepEqual(violations(later, borrower(), true), []);
  });

  it('an agent created during onboarding ends with ACTIVE once the borrower is activated, so its captures read two documents', () => {
    assert.deepEqual(violations(later, borrower({ status: 'ONBOARDING' }), false, activateIt), []);
  });

  it('the model catches a copy that the last writer wins (the version is what makes it safe)', () => {
    assert.notDeepEqual(violations(lastWriterWins, borrower(), false), []);
  });
});
