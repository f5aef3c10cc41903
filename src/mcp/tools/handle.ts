import { claimHandle } from './services.js';
import { defineTool } from './define.js';
import { ClaimHandleInput } from './inputs.js';
import { ClaimHandleOutput } from '@credit-facilitator/wire/tool-outputs';

export const claimHandleTool = defineTool({
  name: 'claim_handle',
  title: 'Claim a handle',
  description:
    "Claims the borrower's unique public handle (3-32 of a-z 0-9 _ -, starting with a letter), which completes onboarding (stage ACTIVE). " +
    'HANDLE_TAKEN means pick another. Next: refresh the token (it then carries the spend and repayment scopes) and use prepare_x402_payment.',
  inputSchema: ClaimHandleInput,
  outputSchema: ClaimHandleOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: claimHandle,
  summarize: (o) => `Handle ${String(o.handle)} claimed; stage ${String(o.stage)}.`,
});
