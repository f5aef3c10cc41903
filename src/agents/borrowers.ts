import type { AgentDeps } from './deps.js';
import { newId } from '@credit-facilitator/wire/ids';
import { scopesForStage, type OnboardingStage, type Scope } from '@credit-facilitator/wire/onboarding';
import { changeBorrower } from '../store/borrower-changes.js';
import { listOpenSigningRequests } from '../store/signing-requests.js';
import { ensureOperationalAgent, listBorrowerAgentKeys, listOperationalAgents } from '../store/operational-agents.js';
import { agentKeyView, creditView } from './borrower-views.js';
import { loadBorrower, NEXT_STEP, stageOf, signingUrl, walletOf } from './context.js';
import { ToolError } from '../domain/tool-errors.js';
import { idempotentToolCall } from './idempotency.js';
import { queryOnboardingState, startOnboarding } from './onboarding-client.js';
import type { GetBorrowerStatusInput, RegisterBorrowerInput } from './schemas.js';
import { signingStatus } from './signing.js';
import type { BorrowerPrincipal } from './types.js';

export interface RegisterBorrowerOutput {
  borrower_id: string;
  operational_agent_id: string;
  stage: OnboardingStage;
  wallet_address: string;
  scopes_unlocked: Scope[];
}

/**
 * Starts onboarding (workflow onboarding-{borrowerId}, stage WALLET_VERIFIED) and creates one
 * operational agent (this terminal) per idempotency key.
 */
export async function registerBorrower(deps: AgentDeps, p: BorrowerPrincipal, args: RegisterBorrowerInput): Promise<RegisterBorrowerOutput> {
  const b = await loadBorrower(deps, p);
  const wallet = walletOf(b);
  return idempotentToolCall(
    deps,
    p,
    { tool: 'register_borrower', key: args.idempotency_key, args, newRef: () => ({ operational_agent_id: newId() }) },
    async ({ ref }) => {
      const operationalAgentId = ref.operational_agent_id;
      await ensureOperationalAgent(deps.store.c, {
        _id: operationalAgentId,
        borrowerId: b._id,
        clientId: p.clientId,
        ...(args.terminal_label ? { label: args.terminal_label } : {}),
        createdAt: new Date(deps.nowMs()),
      });
      await startOnboarding(deps, b._id, wallet.toLowerCase());
      await changeBorrower(deps.store.c, b._id, (cur) => ({ result: undefined, ...(cur?.stage === 'SIGNED_IN' ? { change: { stage: 'WALLET_VERIFIED' } } : {}) }));
      const stage = stageOf(await loadBorrower(deps, p));
      return { borrower_id: b._id, operational_agent_id: operationalAgentId, stage, wallet_address: wallet, scopes_unlocked: scopesForStage(stage) };
    },
  );
}

export interface BorrowerStatusOutput {
  borrower_id: string;
  stage: OnboardingStage;
  handle: string | null;
  wallet_address: string | null;
  scopes_unlocked: Scope[];
  token_scopes: Scope[];
  credit: { limit: string; available: string; held: string; debt: string; asset: string; network: string };
  operational_agents: {
    operational_agent_id: string;
    label: string | null;
    agent_keys: { key_id: string; public_key: string; status: string; per_payment_limit: string | null; daily_limit: string | null; expires_at: number | null }[];
  }[];
  pending_signatures: { signing_request_id: string; kind: string; status: string; signing_url: string; expires_at: string }[];
  /** Set while an operator has suspended the borrower: prepare and capture refuse with borrower_not_active. */
  suspended: { at: string; reason: string } | null;
  next_step: string;
}

/** Identity, stage, scopes and credit. The workflow answers the stage when it can; the store mirror otherwise. */
export async function getBorrowerStatus(deps: AgentDeps, p: BorrowerPrincipal, args: GetBorrowerStatusInput = {}): Promise<BorrowerStatusOutput> {
  const c = deps.store.c;
  const b = await loadBorrower(deps, p);
  const [workflowState, agents, keys, pending] = await Promise.all([
    stageOf(b) === 'SIGNED_IN' ? Promise.resolve(null) : queryOnboardingState(deps, b._id),
    listOperationalAgents(c, b._id),
    listBorrowerAgentKeys(c, b._id),
    listOpenSigningRequests(c, b._id, new Date(deps.nowMs())),
  ]);
  const stage = workflowState?.stage ?? stageOf(b);
  const shown = args.operational_agent_id ? agents.filter((a) => a._id === args.operational_agent_id) : agents;
  if (args.operational_agent_id && shown.length === 0) throw new ToolError('NOT_FOUND', 'no such operational agent for this borrower');
  return {
    borrower_id: b._id,
    stage,
    handle: workflowState?.handle ?? b.handle ?? null,
    wallet_address: b.walletAddress ?? null,
    scopes_unlocked: scopesForStage(stage),
    token_scopes: p.scopes,
    credit: {
      ...creditView(b),
      asset: deps.settlement.asset,
      network: deps.settlement.network,
    },
    operational_agents: shown.map((a) => ({
      operational_agent_id: a._id,
      label: a.label ?? null,
      agent_keys: keys.filter((k) => k.operationalAgentId === a._id).map(agentKeyView),
    })),
    pending_signatures: pending.map((r) => ({
      signing_request_id: r._id,
      kind: r.kind,
      status: signingStatus(r, deps.nowMs()),
      signing_url: signingUrl(deps, r._id),
      expires_at: r.expiresAt.toISOString(),
    })),
    suspended: b.suspended ? { at: b.suspended.at.toISOString(), reason: b.suspended.reason } : null,
    next_step: b.suspended ? 'Suspended by the operator: no new payments until reinstated; repayments still work.' : NEXT_STEP[stage],
  };
}
