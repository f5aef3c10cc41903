import type { PrivateKeyAccount } from 'viem/accounts';
import { submitSignature, typedDataFromJson } from '../../src/agents/signing.js';
import type { SigningStep } from '../../src/agents/types.js';
import type { AgentDeps } from './agent-deps.js';

/** The borrower's wallet signs a step's typed data, as the signing page's EIP-1193 wallet would. */
export async function signStep(wallet: PrivateKeyAccount, step: SigningStep): Promise<`0x${string}`> {
  return wallet.signTypedData(typedDataFromJson(step.typed_data) as Parameters<PrivateKeyAccount['signTypedData']>[0]);
}

export async function signAndSubmit(deps: AgentDeps, wallet: PrivateKeyAccount, step: SigningStep) {
  return submitSignature(deps, step.signing_request_id, await signStep(wallet, step));
}
