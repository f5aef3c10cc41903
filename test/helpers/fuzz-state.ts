import assert from 'node:assert/strict';
import type { Collections } from '../../src/store/collections.js';
import { spendIntentWorkflowId } from '../../src/temporal/agent-definitions.js';
import type { World } from './world.js';
import { findBorrower } from '../../src/store/borrowers.js';
import { withBatchOutcomes } from '../../src/store/payment-outcomes.js';

/**
 * What a fuzz run may leave behind: only what its accepted calls created. Snapshots list the ids
 * of every document and Temporal workflow scoped to the fuzzed merchants and borrowers; the diff
 * must equal the ids the successful answers named, and the documents must hang together.
 */

export interface FuzzScope {
  merchantIds: string[];
  borrowerIds: string[];
}

/** Collections scoped by merchantId or borrowerId; agentSpendDays by the borrower's agent keys. */
const BY_MERCHANT = ['payments', 'idempotency', 'spendIntents', 'apiKeys'] as const satisfies readonly (keyof Collections)[];
const BY_BORROWER = [
  'payments', 'spendIntents', 'operationalAgents', 'agentKeys', 'signingRequests', 'toolIdempotency', 'repayments', 'handles',
] as const satisfies readonly (keyof Collections)[];

export type CollectionName = (typeof BY_MERCHANT)[number] | (typeof BY_BORROWER)[number] | 'agentSpendDays' | 'workflows';

export interface Snapshot {
  ids: Map<CollectionName, Set<string>>;
  /** Temporal execution status by workflow id (RUNNING, COMPLETED, TERMINATED...). */
  workflowStatus: Map<string, string>;
}

function add(s: Snapshot, name: CollectionName, ids: Iterable<string>): void {
  const set = s.ids.get(name) ?? new Set<string>();
  for (const id of ids) set.add(id);
  s.ids.set(name, set);
}

async function idsOf(c: Collections, name: keyof Collections, filter: Record<string, unknown>): Promise<string[]> {
  const col = c[name] as unknown as { find(f: Record<string, unknown>, o: { projection: { _id: 1 } }): { toArray(): Promise<{ _id: string }[]> } };
  return (await col.find(filter, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
}

async function workflowStatus(w: World, scope: FuzzScope): Promise<Map<string, string>> {
  const queries = [...scope.merchantIds.map((id) => `MerchantId = "${id}"`), ...scope.borrowerIds.map((id) => `BorrowerId = "${id}"`)];
  const out = new Map<string, string>();
  for (const query of queries) for await (const wf of w.temporal.workflow.list({ query })) out.set(wf.workflowId, wf.status.name);
  return out;
}

export async function snapshot(w: World, scope: FuzzScope): Promise<Snapshot> {
  const c = w.store.c;
  const s: Snapshot = { ids: new Map(), workflowStatus: await workflowStatus(w, scope) };
  for (const merchantId of scope.merchantIds) for (const name of BY_MERCHANT) add(s, name, await idsOf(c, name, { merchantId }));
  for (const borrowerId of scope.borrowerIds) {
    for (const name of BY_BORROWER) add(s, name, await idsOf(c, name, { borrowerId }));
    const keyIds = await idsOf(c, 'agentKeys', { borrowerId });
    add(s, 'agentSpendDays', await idsOf(c, 'agentSpendDays', { agentKeyId: { $in: keyIds } }));
  }
  add(s, 'workflows', s.workflowStatus.keys());
  return s;
}

/** Ids a run is allowed to add, per collection; everything else must be unchanged. */
export class Expected {
  readonly ids = new Map<CollectionName, Set<string>>();
  add(name: CollectionName, id: string): void {
    const set = this.ids.get(name) ?? new Set<string>();
    set.add(id);
    this.ids.set(name, set);
  }
  /** A new spend intent brings its expiry workflow. */
  spendIntent(id: string): void {
    this.add('spendIntents', id);
    this.add('workflows', spendIntentWorkflowId(id));
  }
  /** A new payment brings its payment workflow (id = paymentId). */
  payment(id: string): void {
    this.add('payments', id);
    this.add('workflows', id);
  }
}

const setDiff = (a: Set<string>, b: Set<string>): string[] => [...a].filter((x) => !b.has(x)).sort();

/**
 * After a run: the new ids in each collection are exactly the expected ones, except for the
 * collections listed in `loose`, where only "no more than expected" is asserted.
 * Temporal visibility lags a little, so a workflow mismatch is retried for a while before it counts.
 */
export async function assertOnlyExpected(w: World, scope: FuzzScope, before: Snapshot, expected: Expected, opts: { loose?: CollectionName[] } = {}): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const after = await snapshot(w, scope);
    const problems: string[] = [];
    const names = new Set<CollectionName>([...after.ids.keys(), ...expected.ids.keys()]);
    for (const name of names) {
      const added = new Set(setDiff(after.ids.get(name) ?? new Set(), before.ids.get(name) ?? new Set()));
      // An id the run was allowed to touch may have existed before (a replay): it is not new then.
      const want = new Set([...(expected.ids.get(name) ?? [])].filter((id) => !before.ids.get(name)?.has(id)));
      // A workflow a refused call started and stopped again (terminated) is history, not state.
      const unexpected = setDiff(added, want).filter((id) => !(name === 'workflows' && after.workflowStatus.get(id) === 'TERMINATED'));
      const missing = opts.loose?.includes(name) ? [] : setDiff(want, added);
      if (unexpected.length) problems.push(`${name}: ${unexpected.length} unexpected new ids ${unexpected.slice(0, 5).join(', ')}`);
      if (missing.length) problems.push(`${name}: ${missing.length} expected ids missing ${missing.slice(0, 5).join(', ')}`);
    }
    const stopped = [...(expected.ids.get('workflows') ?? [])].filter((id) => after.workflowStatus.get(id) === 'TERMINATED');
    if (stopped.length) problems.push(`workflows: ${stopped.length} of the accepted calls' workflows were terminated: ${stopped.slice(0, 5).join(', ')}`);
    if (problems.length === 0) return;
    const onlyWorkflows = problems.every((p) => p.startsWith('workflows:'));
    if (!onlyWorkflows || Date.now() > deadline) assert.fail(`the fuzz run left state it should not have:\n  ${problems.join('\n  ')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Credit is conserved (limit = available + held + debt) and every hold, order claim and tool
 * idempotency record points at something that exists: a crash half-way leaves one of them dangling.
 */
export async function assertConsistent(w: World, borrowerId: string): Promise<void> {
  const c = w.store.c;
  const b = await findBorrower(c, borrowerId);
  assert.ok(b, 'borrower exists');
  const held = Object.values(b.holds ?? {}).reduce((s, v) => s + v, 0);
  assert.equal(b.available + held + b.debt, b.creditLimit, `credit conserved: available ${b.available} + held ${held} + debt ${b.debt} = limit ${b.creditLimit}`);
  const intents = new Map((await c.spendIntents.find({ borrowerId }).toArray()).map((d) => [d._id, d]));
  for (const holdId of Object.keys(b.holds ?? {})) {
    assert.ok(intents.has(holdId), `hold ${holdId} has a spend intent`);
  }
  const signing = new Set(await idsOf(c, 'signingRequests', { borrowerId }));
  const agents = new Set(await idsOf(c, 'operationalAgents', { borrowerId }));
  for (const claim of await c.toolIdempotency.find({ borrowerId }).toArray()) {
    const ref = claim.ref ?? {};
    if (typeof ref.spend_intent_id === 'string') assert.ok(intents.has(ref.spend_intent_id), `${claim.tool} claim ${claim._id} names an existing spend intent`);
    if (typeof ref.signing_request_id === 'string') assert.ok(signing.has(ref.signing_request_id), `${claim.tool} claim ${claim._id} names an existing signing request`);
    if (typeof ref.operational_agent_id === 'string') assert.ok(agents.has(ref.operational_agent_id), `${claim.tool} claim ${claim._id} names an existing terminal`);
  }
  const keyIds = await idsOf(c, 'agentKeys', { borrowerId });
  for (const day of await c.agentSpendDays.find({ agentKeyId: { $in: keyIds } }).toArray()) {
    const charged = Object.values(day.charges ?? {}).reduce((s, v) => s + v, 0);
    assert.equal(day.spent, charged, `daily spend ${day._id} equals the sum of its charges`);
    for (const intentId of Object.keys(day.charges ?? {})) {
      if (intents.has(intentId)) continue;
      const wf = await w.temporal.workflow.getHandle(spendIntentWorkflowId(intentId)).describe().then((d) => d.status.name, () => 'none');
      assert.fail(`daily spend charge ${intentId} (${day.charges?.[intentId]}) has no spend intent; its expiry workflow: ${wf}`);
    }
  }
  for (const r of await c.repayments.find({ borrowerId }).toArray()) assert.ok(signing.has(r.signingRequestId), `repayment ${r._id} has its signing request`);
}

/** Payments of these merchants: none left CAPTURING, and each holds exactly one idempotency key. */
export async function assertPaymentsComplete(w: World, merchantId: string): Promise<void> {
  const c = w.store.c;
  const payments = await withBatchOutcomes(c, await c.payments.find({ merchantId }).toArray());
  for (const p of payments) assert.notEqual(p.status, 'CAPTURING', `payment ${p._id} left CAPTURING (neither settled, failed nor voided)`);
  const keys = await c.idempotency.find({ merchantId }).toArray();
  assert.deepEqual(keys.map((k) => k.paymentId).sort(), payments.map((p) => p._id).sort(), 'one idempotency key per payment, none dangling');
}
