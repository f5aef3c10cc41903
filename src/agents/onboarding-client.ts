import { WorkflowNotFoundError, WorkflowUpdateFailedError, type UpdateDefinition } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentDeps } from './deps.js';
import { BorrowerIdKey } from '../temporal/search-attributes.js';
import { ONBOARDING_FAILURES, onboardingStateQuery, onboardingWorkflowId, type OnboardingState } from '../temporal/agent-definitions.js';
import { ToolError, type ToolErrorCode } from '../domain/tool-errors.js';

/** Starts onboarding-{borrowerId} at WALLET_VERIFIED; a running one is kept (USE_EXISTING). */
export async function startOnboarding(deps: AgentDeps, borrowerId: string, wallet: string): Promise<void> {
  try {
    await deps.temporal.workflow.start('onboardingWorkflow', {
      workflowId: onboardingWorkflowId(borrowerId),
      taskQueue: deps.env.TEMPORAL_TASK_QUEUE,
      args: [{ borrowerId, wallet }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [{ key: BorrowerIdKey, value: borrowerId }],
    });
  } catch (err) {
    deps.logger.warn('onboarding workflow start failed', { borrowerId, error: err });
    throw new ToolError('UNAVAILABLE', 'onboarding is temporarily unavailable; retry shortly');
  }
}

const FAILURE_CODES: Record<string, ToolErrorCode> = {
  [ONBOARDING_FAILURES.stage]: 'STAGE_REQUIRED',
  [ONBOARDING_FAILURES.handleTaken]: 'HANDLE_TAKEN',
  [ONBOARDING_FAILURES.invalid]: 'INVALID_INPUT',
};

/** The ApplicationFailure a refused or failed update carries, wherever it sits in the cause chain. */
function applicationFailure(err: unknown): ApplicationFailure | null {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    if (e instanceof ApplicationFailure && e.type && FAILURE_CODES[e.type]) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * Runs one onboarding update and maps its outcome: validator refusals and the workflow's own
 * failures become ToolErrors with the same codes; anything else is UNAVAILABLE (retryable).
 */
export async function runOnboardingUpdate<Ret, Arg>(
  deps: AgentDeps,
  borrowerId: string,
  update: UpdateDefinition<Ret, [Arg]>,
  arg: Arg,
  updateId?: string,
): Promise<Ret> {
  const handle = deps.temporal.workflow.getHandle(onboardingWorkflowId(borrowerId));
  try {
    return await handle.executeUpdate(update, { args: [arg], ...(updateId ? { updateId } : {}) });
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new ToolError('STAGE_REQUIRED', 'onboarding has not started; call register_borrower first', { required_stage: 'WALLET_VERIFIED' });
    const failure = err instanceof WorkflowUpdateFailedError ? applicationFailure(err) : null;
    if (failure?.type) throw new ToolError(FAILURE_CODES[failure.type] as ToolErrorCode, failure.message);
    deps.logger.warn('onboarding update failed', { borrowerId, update: update.name, error: err });
    throw new ToolError('UNAVAILABLE', 'onboarding is temporarily unavailable; retry shortly');
  }
}

/** The workflow's own view of onboarding, or null when it cannot answer within `timeoutMs`. */
export async function queryOnboardingState(deps: AgentDeps, borrowerId: string, timeoutMs = 1500): Promise<OnboardingState | null> {
  try {
    const handle = deps.temporal.workflow.getHandle(onboardingWorkflowId(borrowerId));
    return await deps.temporal.connection.withDeadline(Date.now() + timeoutMs, () => handle.query(onboardingStateQuery));
  } catch {
    return null;
  }
}
