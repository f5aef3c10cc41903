import { getAddress } from 'viem';
import type { AgentDeps } from './deps.js';
import type { Deployment } from '../chain/deploy.js';
import { publicOrigin } from '../config/env.js';
import { isStage, stageIndex, type OnboardingStage } from '@credit-facilitator/wire/onboarding';
import type { BorrowerDomainInput } from '../domain/typed-data.js';
import { findBorrower } from '../store/borrowers.js';
import type { BorrowerDoc, OperationalAgentDoc } from '../store/documents.js';
import { listOperationalAgents } from '../store/operational-agents.js';
import { ToolError } from '../domain/tool-errors.js';
import type { BorrowerPrincipal } from './types.js';

/** Next thing the borrower does at each stage (also get_borrower_status's next_step). */
export const NEXT_STEP: Readonly<Record<OnboardingStage, string>> = {
  SIGNED_IN: 'Call register_borrower to start onboarding.',
  WALLET_VERIFIED: 'Call accept_credit_facility and have the borrower sign the facility terms at the signing link.',
  FACILITY_ACCEPTED: 'Call register_agent_key with your Ed25519 public key and limits, and have the borrower sign the grant.',
  AGENT_KEY_REGISTERED: 'Call claim_handle to pick a unique handle; that activates the credit line.',
  ACTIVE: 'Ready: call prepare_x402_payment when a merchant answers 402, and execute_repayment to repay debt.',
};

export async function loadBorrower(deps: AgentDeps, p: BorrowerPrincipal): Promise<BorrowerDoc> {
  const b = await findBorrower(deps.store.c, p.borrowerId);
  if (!b) throw new ToolError('NOT_FOUND', 'no borrower for this token; sign in again');
  return b;
}

export function stageOf(b: BorrowerDoc): OnboardingStage {
  return isStage(b.stage) ? b.stage : b.status === 'ACTIVE' ? 'ACTIVE' : 'SIGNED_IN';
}

export function requireStage(b: BorrowerDoc, min: OnboardingStage): OnboardingStage {
  const stage = stageOf(b);
  if (stageIndex(stage) < stageIndex(min)) {
    throw new ToolError('STAGE_REQUIRED', `this step needs onboarding stage ${min}; the borrower is at ${stage}. ${NEXT_STEP[stage]}`, {
      stage,
      required_stage: min,
    });
  }
  return stage;
}

export function walletOf(b: BorrowerDoc): `0x${string}` {
  if (!b.walletAddress) throw new ToolError('STAGE_REQUIRED', 'the borrower has no verified wallet; sign in with a wallet', { stage: stageOf(b) });
  return getAddress(b.walletAddress);
}

/** The operational agent a call acts for: the named one (must be the borrower's), else the only one; never a revoked one. */
export async function resolveOperationalAgent(deps: AgentDeps, p: BorrowerPrincipal, id: string | undefined): Promise<OperationalAgentDoc> {
  const all = await listOperationalAgents(deps.store.c, p.borrowerId);
  const revoked = (a: OperationalAgentDoc) =>
    new ToolError('POLICY_DENIED', 'the borrower revoked this operational agent on their page; it can neither pay nor get new keys. Call register_borrower for a new one.', {
      reason: 'operational_agent_revoked',
      operational_agent_id: a._id,
    });
  if (id !== undefined) {
    const found = all.find((a) => a._id === id.toLowerCase());
    if (!found) throw new ToolError('NOT_FOUND', 'no such operational agent for this borrower', { operational_agent_id: id });
    if (found.revokedAt) throw revoked(found);
    return found;
  }
  const agents = all.filter((a) => !a.revokedAt);
  const [only, ...rest] = agents;
  if (!only && all[0]) throw revoked(all[0]);
  if (!only) throw new ToolError('STAGE_REQUIRED', 'no operational agent yet; call register_borrower first', { required_stage: 'WALLET_VERIFIED' });
  if (rest.length > 0) {
    throw new ToolError('OPERATIONAL_AGENT_REQUIRED', 'the borrower has several operational agents; pass operational_agent_id', {
      operational_agent_ids: agents.map((a) => a._id),
    });
  }
  return only;
}

export function borrowerDomainInput(deps: AgentDeps): BorrowerDomainInput {
  return { chainId: deps.env.CHAIN_ID, verifyingContract: getAddress(deps.settlement.settlementContract) };
}

/** What src/chain/eip3009.ts needs about the deployment, from the facilitator's settlement info. */
export function deploymentOf(deps: AgentDeps): Deployment {
  const s = deps.settlement;
  return {
    chainId: deps.env.CHAIN_ID,
    settlement: getAddress(s.settlementContract),
    asset: getAddress(s.asset),
    assetDecimals: s.assetDecimals,
    assetName: s.assetName,
    assetVersion: s.assetVersion,
    settler: getAddress(s.settler),
    deployBlock: deps.env.DEPLOY_BLOCK,
  };
}

export function signingUrl(deps: AgentDeps, signingRequestId: string): string {
  return `${publicOrigin(deps.env)}/borrower/sign/${signingRequestId}`;
}
