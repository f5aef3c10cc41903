import { acceptCreditFacility } from './services.js';
import { defineTool } from './define.js';
import { AcceptCreditFacilityInput } from './inputs.js';
import { SigningStepOutput } from '@credit-facilitator/wire/tool-outputs';
import { summarizeSigningStep } from './signing-summary.js';

export const acceptCreditFacilityTool = defineTool({
  name: 'accept_credit_facility',
  title: 'Accept the credit facility',
  description:
    'Asks the borrower to accept the credit facility by signing FacilityAcceptance (EIP-712) in their own wallet. ' +
    'Returns a signing step: open signing_url in the borrower\'s browser (or pass typed_data to their wallet). ' +
    'Call again with the same idempotency_key (wait_seconds up to 25) to see completion; the result holds credit_limit and stage. ' +
    'Next: refresh the token (agent:key:register) and call register_agent_key.',
  inputSchema: AcceptCreditFacilityInput,
  outputSchema: SigningStepOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: acceptCreditFacility,
  summarize: summarizeSigningStep,
});
