import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { OnboardingStage } from '@credit-facilitator/wire/onboarding';
import type { AgentGrant } from '../domain/agent-policy.js';

/** Names shared by the agent workflows, their activities and src/agents; importing this pulls in no workflow code. */
export const onboardingWorkflowId = (borrowerId: string): string => `onboarding-${borrowerId}`;
export const spendIntentWorkflowId = (spendIntentId: string): string => `spend-intent-${spendIntentId}`;
export const repaymentWorkflowId = (repaymentId: string): string => `repayment-${repaymentId}`;

/** ApplicationFailure types the onboarding updates fail with; src/agents maps them to ToolError codes. */
export const ONBOARDING_FAILURES = { stage: 'STAGE_REQUIRED', handleTaken: 'HANDLE_TAKEN', invalid: 'INVALID_INPUT' } as const;

export interface AgentKeySummary {
  keyId: string;
  operationalAgentId: string;
  status: 'active' | 'revoked';
}

export interface OnboardingState {
  borrowerId: string;
  wallet: string;
  stage: OnboardingStage;
  handle?: string;
  /** Base units, decimal string. */
  creditLimit?: string;
  agentKeys: AgentKeySummary[];
  /** Results of applied updates by signing request (or handle) id, so a repeated update replays. */
  applied: Record<string, Record<string, unknown>>;
}

export interface OnboardingInput {
  borrowerId: string;
  wallet: string;
  /** Carried across continue-as-new. */
  state?: OnboardingState;
}

export interface AcceptFacilityArgs {
  signingRequestId: string;
  creditLimit: string;
}

export interface RegisterAgentKeyArgs {
  signingRequestId: string;
  keyId: string;
  operationalAgentId: string;
  publicKey: string;
  grant: AgentGrant;
  /** rotate_agent_key: also revoke the operational agent's other active keys. */
  rotate: boolean;
}

export interface ClaimHandleArgs {
  handle: string;
}

export const acceptFacilityUpdate = defineUpdate<{ credit_limit: string; stage: OnboardingStage }, [AcceptFacilityArgs]>('acceptFacility');
export const registerAgentKeyUpdate = defineUpdate<{ key_id: string; stage: OnboardingStage; revoked_key_ids: string[] }, [RegisterAgentKeyArgs]>(
  'registerAgentKey',
);
export const claimHandleUpdate = defineUpdate<{ handle: string; stage: OnboardingStage }, [ClaimHandleArgs]>('claimHandle');
export const onboardingStateQuery = defineQuery<OnboardingState>('state');

export interface SpendIntentWorkflowInput {
  spendIntentId: string;
  borrowerId: string;
  /** agentSpendDays id charged for the intent, when an agent key's daily limit was charged. */
  spendDayId?: string;
  /** Unix milliseconds after which an unconsumed intent is expired and its credit released. */
  releaseAtMs: number;
}

export interface RepaymentWorkflowInput {
  repaymentId: string;
}

export interface RepaymentOutcome {
  repayment_id: string;
  status: 'CONFIRMED' | 'FAILED';
  transaction?: string;
  debt?: string;
  available?: string;
  failure_reason?: string;
}
