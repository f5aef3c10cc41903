import type { AgentDeps } from './deps.js';
import { normalizeHandle } from '../domain/handles.js';
import type { OnboardingStage } from '@credit-facilitator/wire/onboarding';
import { claimHandleUpdate } from '../temporal/agent-definitions.js';
import { loadBorrower, requireStage } from './context.js';
import { ToolError } from '../domain/tool-errors.js';
import { idempotentToolCall } from './idempotency.js';
import { runOnboardingUpdate } from './onboarding-client.js';
import type { ClaimHandleInput } from './schemas.js';
import type { BorrowerPrincipal } from './types.js';

const HANDLE_RULE = 'handles are 3-32 characters of a-z, 0-9, _ and -, starting with a letter';

/** claim_handle: the workflow's claimHandle update makes the handle the borrower's and the borrower ACTIVE. */
export async function claimHandle(deps: AgentDeps, p: BorrowerPrincipal, args: ClaimHandleInput): Promise<{ handle: string; stage: OnboardingStage }> {
  const checked = normalizeHandle(args.handle);
  if (!checked.ok) {
    throw new ToolError('INVALID_INPUT', checked.reason === 'reserved' ? 'that handle is reserved' : HANDLE_RULE, {
      fields: [{ path: 'handle', message: checked.reason }],
    });
  }
  const b = await loadBorrower(deps, p);
  return idempotentToolCall(deps, p, { tool: 'claim_handle', key: args.idempotency_key, args: { handle: checked.handle }, newRef: () => ({ handle: checked.handle }) }, async () => {
    requireStage(b, 'AGENT_KEY_REGISTERED');
    // The update is idempotent for the borrower's own handle, so a replay simply runs it again.
    return runOnboardingUpdate(deps, b._id, claimHandleUpdate, { handle: checked.handle });
  });
}
