import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AppDeps } from '../../src/main/app-deps.js';
import { acceptCreditFacility } from '../../src/agents/facility.js';
import { registerAgentKey } from '../../src/agents/agent-keys.js';
import { getBorrowerStatus, registerBorrower } from '../../src/agents/borrowers.js';
import { ToolError, type ToolErrorCode } from '../../src/domain/tool-errors.js';
import { claimHandle } from '../../src/agents/handles.js';
import { getSigningRequestView, submitSignature } from '../../src/agents/signing.js';
import { newId } from '@credit-facilitator/wire/ids';
import { encodeKey, generateAgentKeyPair } from '@credit-facilitator/wire/voucher';
import { findOrCreateBorrowerByWallet } from '../../src/store/borrowers.js';
import { claimHandleUpdate, onboardingStateQuery, onboardingWorkflowId } from '../../src/temporal/agent-definitions.js';
import { agentDeps, onboardBorrower, principalFor, signStep } from '../helpers/onboarding.js';
import { world, type World } from '../helpers/world.js';

async function rejects(p: Promise<unknown>, code: ToolErrorCode, detail?: Record<string, unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ToolError, `expected ToolError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    for (const [k, v] of Object.entries(detail ?? {})) assert.deepEqual(err.details[k], v);
    return err;
  }
  assert.fail(`expected ToolError ${code}, but the call succeeded`);
}

const keyInput = (publicKey = encodeKey(generateAgentKeyPair().publicKey)) => ({
  idempotency_key: randomUUID(),
  public_key: publicKey,
  per_payment_limit: '1000000',
  daily_limit: '5000000',
  expires_at: Math.floor(Date.now() / 1000) + 3600,
});

describe('agents: onboarding through the services and the onboarding workflow', function () {
  let w: World;
  let deps: AppDeps;

  before(async function () {
    this.timeout(300_000);
    w = await world();
    deps = await agentDeps(w);
  });

  it('walks SIGNED_IN -> ACTIVE, with the workflow, the store mirror and status in step', async () => {
    const b = await onboardBorrower(w);
    const doc = await w.store.c.borrowers.findOne({ _id: b.borrowerId });
    assert.equal(doc?.stage, 'ACTIVE');
    assert.equal(doc?.status, 'ACTIVE');
    assert.equal(doc?.handle, b.handle);
    assert.equal(String(doc?.creditLimit), deps.env.DEFAULT_CREDIT_LIMIT);
    assert.equal(String(doc?.available), deps.env.DEFAULT_CREDIT_LIMIT);

    const state = await w.temporal.workflow.getHandle(onboardingWorkflowId(b.borrowerId)).query(onboardingStateQuery);
    assert.equal(state.stage, 'ACTIVE');
    assert.equal(state.handle, b.handle);
    assert.deepEqual(state.agentKeys.map((k) => k.keyId), [b.agentKeyId]);

    const status = await getBorrowerStatus(deps, b.principal, {});
    assert.equal(status.stage, 'ACTIVE');
    assert.equal(status.handle, b.handle);
    assert.equal(status.wallet_address, b.wallet.address.toLowerCase());
    assert.ok(status.scopes_unlocked.includes('repayment:execute'));
    assert.equal(status.credit.limit, deps.env.DEFAULT_CREDIT_LIMIT);
    assert.equal(status.credit.held, '0');
    assert.equal(status.operational_agents[0]?.operational_agent_id, b.operationalAgentId);
    assert.equal(status.operational_agents[0]?.agent_keys[0]?.key_id, b.agentKeyId);
    assert.equal(status.operational_agents[0]?.agent_keys[0]?.per_payment_limit, '5000000');
    assert.deepEqual(status.pending_signatures, []);

    const key = await w.store.c.agentKeys.findOne({ _id: b.agentKeyId });
    assert.equal(key?.status, 'active');
    assert.match(key?.grant?.signature ?? '', /^0x[0-9a-f]{130}$/);
  });

  it('enforces stage order in the services and in the workflow validators', async () => {
    const b = await onboardBorrower(w, { until: 'WALLET_VERIFIED' });
    await rejects(claimHandle(deps, b.principal, { idempotency_key: randomUUID(), handle: 'early-bird' }), 'STAGE_REQUIRED', { required_stage: 'AGENT_KEY_REGISTERED' });
    await rejects(registerAgentKey(deps, b.principal, keyInput()), 'STAGE_REQUIRED', { required_stage: 'FACILITY_ACCEPTED' });

    // Straight at the workflow, past the service checks: the update validator refuses it.
    const handle = w.temporal.workflow.getHandle(onboardingWorkflowId(b.borrowerId));
    await assert.rejects(handle.executeUpdate(claimHandleUpdate, { args: [{ handle: 'sneaky' }] }), WorkflowUpdateFailedError);
    assert.equal((await handle.query(onboardingStateQuery)).stage, 'WALLET_VERIFIED');
    assert.equal((await w.store.c.handles.findOne({ _id: 'sneaky' }))?.borrowerId === b.borrowerId, false);

    const status = await getBorrowerStatus(deps, b.principal, {});
    assert.equal(status.stage, 'WALLET_VERIFIED');
    assert.deepEqual(status.scopes_unlocked, ['borrower:token', 'credit:facility:accept']);
    assert.match(status.next_step, /accept_credit_facility/);
  });

  it('a signing request accepts only the wallet signature, once; a second facility is refused', async () => {
    const b = await onboardBorrower(w, { until: 'WALLET_VERIFIED' });
    const step = await acceptCreditFacility(deps, b.principal, { idempotency_key: randomUUID() });
    assert.equal(step.status, 'signature_required');
    assert.match(step.signing_url, new RegExp(`/borrower/sign/${step.signing_request_id}$`));
    const view = await getSigningRequestView(deps, step.signing_request_id);
    assert.equal(view?.kind, 'facility_acceptance');
    assert.equal(view?.wallet, b.wallet.address.toLowerCase());
    assert.match(view?.summary ?? '', /credit facility/);

    const stranger = privateKeyToAccount(generatePrivateKey());
    await rejects(submitSignature(deps, step.signing_request_id, await signStep(stranger, step)), 'SIGNATURE_INVALID');
    await rejects(submitSignature(deps, step.signing_request_id, '0x1234'), 'SIGNATURE_INVALID');

    const sig = await signStep(b.wallet, step);
    const first = await submitSignature(deps, step.signing_request_id, sig);
    assert.equal(first.status, 'completed');
    assert.deepEqual(first.result, { credit_limit: deps.env.DEFAULT_CREDIT_LIMIT, stage: 'FACILITY_ACCEPTED' });
    assert.deepEqual(await submitSignature(deps, step.signing_request_id, sig), first);
    await rejects(submitSignature(deps, step.signing_request_id, await signStep(stranger, step)), 'SIGNING_REQUEST_CLOSED');

    // The credit line was booked once, even though the signature was posted twice.
    const doc = await w.store.c.borrowers.findOne({ _id: b.borrowerId });
    assert.equal(String(doc?.available), deps.env.DEFAULT_CREDIT_LIMIT);
    await rejects(acceptCreditFacility(deps, b.principal, { idempotency_key: randomUUID() }), 'STAGE_REQUIRED');
    assert.equal(await getSigningRequestView(deps, newId()), null);
  });

  it('one active key per operational agent: register twice is AGENT_KEY_EXISTS', async () => {
    const b = await onboardBorrower(w, { until: 'AGENT_KEY_REGISTERED' });
    await rejects(registerAgentKey(deps, b.principal, keyInput()), 'AGENT_KEY_EXISTS');
  });

  it('handles: validated, unique across borrowers, idempotent for the owner', async () => {
    const a = await onboardBorrower(w);
    const b = await onboardBorrower(w, { until: 'AGENT_KEY_REGISTERED' });
    for (const bad of ['ab', '9lives', 'has space', 'UPPER!']) {
      await rejects(claimHandle(deps, b.principal, { idempotency_key: randomUUID(), handle: bad }), 'INVALID_INPUT');
    }
    await rejects(claimHandle(deps, b.principal, { idempotency_key: randomUUID(), handle: 'support' }), 'INVALID_INPUT');
    await rejects(claimHandle(deps, b.principal, { idempotency_key: randomUUID(), handle: a.handle.toUpperCase() }), 'HANDLE_TAKEN');
    const stillB = await w.store.c.borrowers.findOne({ _id: b.borrowerId });
    assert.equal(stillB?.stage, 'AGENT_KEY_REGISTERED');
    assert.equal(stillB?.status, 'ONBOARDING');

    const key = randomUUID();
    const mine = `b-${newId().slice(0, 8)}`;
    assert.deepEqual(await claimHandle(deps, b.principal, { idempotency_key: key, handle: mine }), { handle: mine, stage: 'ACTIVE' });
    assert.deepEqual(await claimHandle(deps, b.principal, { idempotency_key: key, handle: mine }), { handle: mine, stage: 'ACTIVE' });
    await rejects(claimHandle(deps, b.principal, { idempotency_key: randomUUID(), handle: `c-${newId().slice(0, 8)}` }), 'INVALID_INPUT');
    assert.equal((await w.store.c.handles.findOne({ _id: a.handle }))?.borrowerId, a.borrowerId);
  });

  it('idempotency: replay returns the first result, other arguments conflict, concurrent duplicates create one', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const doc = await findOrCreateBorrowerByWallet(w.store.c, wallet.address, newId(), new Date());
    const p = principalFor(doc._id);
    const key = randomUUID();
    const first = await registerBorrower(deps, p, { idempotency_key: key, terminal_label: 'laptop' });
    const again = await registerBorrower(deps, p, { idempotency_key: key, terminal_label: 'laptop' });
    assert.equal(again.operational_agent_id, first.operational_agent_id);
    assert.equal(first.stage, 'WALLET_VERIFIED');
    await rejects(registerBorrower(deps, p, { idempotency_key: key, terminal_label: 'phone' }), 'IDEMPOTENCY_KEY_CONFLICT');
    // Another borrower may use the same key: keys are per borrower.
    const other = await onboardBorrower(w, { until: 'WALLET_VERIFIED' });
    assert.notEqual((await registerBorrower(deps, other.principal, { idempotency_key: key, terminal_label: 'laptop' })).operational_agent_id, first.operational_agent_id);

    const facilityKey = randomUUID();
    const steps = await Promise.all(Array.from({ length: 5 }, () => acceptCreditFacility(deps, p, { idempotency_key: facilityKey })));
    assert.equal(new Set(steps.map((s) => s.signing_request_id)).size, 1);
    assert.equal(await w.store.c.signingRequests.countDocuments({ borrowerId: p.borrowerId }), 1);
    await rejects(acceptCreditFacility(deps, p, { idempotency_key: key }), 'IDEMPOTENCY_KEY_CONFLICT');

    // Replay with wait_seconds long-polls until the page's signature completes the step.
    const step = steps[0]!;
    const waiting = acceptCreditFacility(deps, p, { idempotency_key: facilityKey, wait_seconds: 10 });
    await new Promise((r) => setTimeout(r, 300));
    await submitSignature(deps, step.signing_request_id, await signStep(wallet, step));
    const done = await waiting;
    assert.equal(done.status, 'completed');
    assert.equal(done.result?.stage, 'FACILITY_ACCEPTED');

    // Two operational agents: a key call must name one.
    await registerBorrower(deps, p, { idempotency_key: randomUUID(), terminal_label: 'second' });
    await rejects(registerAgentKey(deps, p, keyInput()), 'OPERATIONAL_AGENT_REQUIRED');
    await rejects(registerAgentKey(deps, p, { ...keyInput(), operational_agent_id: newId() }), 'NOT_FOUND');
  });
});
