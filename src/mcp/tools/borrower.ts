import { getBorrowerStatus, registerBorrower } from './services.js';
import { defineTool } from './define.js';
import { GetBorrowerStatusInput, RegisterBorrowerInput } from './inputs.js';
import { BorrowerStatusOutput, RegisterBorrowerOutput } from '@credit-facilitator/wire/tool-outputs';

export const registerBorrowerTool = defineTool({
  name: 'register_borrower',
  title: 'Register the signed-in borrower',
  description:
    'Starts credit onboarding for the borrower who signed in with their wallet and registers this agent host as one of their terminals. ' +
    'Store the returned operational_agent_id. Same idempotency_key replays the first result. ' +
    'Next: refresh the token (it then carries credit:facility:accept) and call accept_credit_facility.',
  inputSchema: RegisterBorrowerInput,
  outputSchema: RegisterBorrowerOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: registerBorrower,
  summarize: (o) => `Borrower ${String(o.borrower_id)} is at stage ${String(o.stage)}; terminal ${String(o.operational_agent_id)}.`,
});

export const getBorrowerStatusTool = defineTool({
  name: 'get_borrower_status',
  title: 'Borrower status',
  description:
    "The borrower's onboarding stage, handle, credit (limit, available, held, debt), terminals and agent keys, pending signatures, " +
    'the scopes unlocked at this stage and the scopes this token carries, and next_step. ' +
    'A difference between scopes_unlocked and token_scopes is not a reason to refresh; refresh when the token nears expiry or a tool answers insufficient_scope.',
  inputSchema: GetBorrowerStatusInput,
  outputSchema: BorrowerStatusOutput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  run: getBorrowerStatus,
  summarize: (o) => `Stage ${String(o.stage)}.${typeof o.next_step === 'string' ? ` Next: ${o.next_step}` : ''}`,
});
