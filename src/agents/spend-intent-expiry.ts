import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { AgentDeps } from './deps.js';
import { findBorrower } from '../store/borrowers.js';
import { findSpendIntent } from '../store/spend-intents.js';
import { BorrowerIdKey } from '../temporal/search-attributes.js';
import { spendIntentWorkflowId, type SpendIntentWorkflowInput } from '../temporal/agent-definitions.js';
import { ToolError } from '../domain/tool-errors.js';

/**
 * The expiry workflow `spend-intent-{id}` of a spend intent being prepared: started before any
 * credit is held (so a crash never strands credit), stopped again when the preparation is refused
 * (nothing will ever need expiring). A call that joined the same intent may be holding credit for
 * it meanwhile, so each side checks after its own step: the refusing call, after stopping, looks
 * for a hold or an intent; the joined call, after holding, looks at the workflow. One of them
 * always sees the other and restarts the workflow.
 */

export type ExpiryInput = Required<SpendIntentWorkflowInput>;

const handleOf = (deps: AgentDeps, spendIntentId: string) => deps.temporal.workflow.getHandle(spendIntentWorkflowId(spendIntentId));

export async function startExpiry(deps: AgentDeps, input: ExpiryInput): Promise<void> {
  try {
    await deps.temporal.workflow.start('spendIntentWorkflow', {
      workflowId: spendIntentWorkflowId(input.spendIntentId),
      taskQueue: deps.env.TEMPORAL_TASK_QUEUE,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      // A run stopped by a refused preparation (terminated) may be started again; a completed expiry may not.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      typedSearchAttributes: [{ key: BorrowerIdKey, value: input.borrowerId }],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    deps.logger.warn('spend intent workflow start failed', { spendIntentId: input.spendIntentId, error: err });
    throw new ToolError('UNAVAILABLE', 'payments are temporarily unavailable; retry shortly');
  }
}

/** After a refusal: stop the workflow, unless (checked after stopping) credit is held or an intent exists for the id. */
export async function stopExpiry(deps: AgentDeps, input: ExpiryInput): Promise<void> {
  await handleOf(deps, input.spendIntentId)
    .terminate('the spend intent was refused before it was created')
    .catch((err: unknown) => deps.logger.warn('spend intent workflow stop failed', { spendIntentId: input.spendIntentId, error: err }));
  const [borrower, intent] = await Promise.all([findBorrower(deps.store.c, input.borrowerId), findSpendIntent(deps.store.c, input.spendIntentId)]);
  if (borrower?.holds?.[input.spendIntentId] !== undefined || intent !== null) await startExpiry(deps, input);
}

/** After a joined call's hold: the creating call may have stopped the workflow in the meantime. */
export async function ensureExpiryRunning(deps: AgentDeps, input: ExpiryInput): Promise<void> {
  const described = await handleOf(deps, input.spendIntentId)
    .describe()
    .catch(() => null);
  if (described?.status.name !== 'RUNNING') await startExpiry(deps, input);
}
