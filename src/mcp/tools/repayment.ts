import { executeRepayment } from './services.js';
import { defineTool } from './define.js';
import { ExecuteRepaymentInput } from './inputs.js';
import { SigningStepOutput } from '@credit-facilitator/wire/tool-outputs';
import { summarizeSigningStep } from './signing-summary.js';

export const executeRepaymentTool = defineTool({
  name: 'execute_repayment',
  title: 'Repay credit',
  description:
    'Repays booked debt from the borrower\'s wallet: the borrower signs a USDC EIP-3009 ReceiveWithAuthorization in their own wallet ' +
    '(open signing_url in their browser). Call again with the same idempotency_key (wait_seconds up to 25) to follow it; ' +
    'the result holds repayment_id, status, transaction, debt and available.',
  inputSchema: ExecuteRepaymentInput,
  outputSchema: SigningStepOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  run: executeRepayment,
  summarize: summarizeSigningStep,
});
