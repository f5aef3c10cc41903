import { registerAgentKey, rotateAgentKey } from './services.js';
import { defineTool } from './define.js';
import { RegisterAgentKeyInput, RotateAgentKeyInput } from './inputs.js';
import { SigningStepOutput } from '@credit-facilitator/wire/tool-outputs';
import { summarizeSigningStep } from './signing-summary.js';

export const registerAgentKeyTool = defineTool({
  name: 'register_agent_key',
  title: 'Register an agent signing key',
  description:
    "Registers this agent's Ed25519 workload public key (base64url) with per-payment and daily limits and an expiry. " +
    'The borrower authorises it by signing AgentGrant (EIP-712) in their own wallet: open signing_url in their browser, ' +
    'then call again with the same idempotency_key to see completion (result: key_id, stage). Never send a private key. ' +
    'Next: refresh the token (handle:claim) and call claim_handle.',
  inputSchema: RegisterAgentKeyInput,
  outputSchema: SigningStepOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: registerAgentKey,
  summarize: summarizeSigningStep,
});

export const rotateAgentKeyTool = defineTool({
  name: 'rotate_agent_key',
  title: 'Rotate the agent signing key',
  description:
    "Replaces the terminal's active Ed25519 key with a new one (same inputs as register_agent_key). Once the borrower signs the " +
    'new AgentGrant, the old key is revoked and vouchers it signed are refused. Open signing_url in the borrower\'s browser; ' +
    'call again with the same idempotency_key to see completion (result: key_id, revoked_key_ids).',
  inputSchema: RotateAgentKeyInput,
  outputSchema: SigningStepOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: rotateAgentKey,
  summarize: summarizeSigningStep,
});
