import { ed25519 } from '@noble/curves/ed25519.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { newId } from '@credit-facilitator/wire/ids';
import { toBase64Url } from '@credit-facilitator/wire/base64url';
import { decodePrivateKey } from '@credit-facilitator/wire/voucher';
import { preparePayment, type PrepareOptions, type PreparedPayment } from '../../src/agents/prepare-payment.js';
import { agentDeps } from './agent-deps.js';
import type { ProvisionedMerchant } from './merchants.js';
import type { OnboardedBorrower } from './onboarding.js';
import { paymentRequiredHeader } from './payment-required.js';
import type { World } from './world.js';

/** Ed25519-signs the tool's signing_input with a base64url seed, as the agent's signer does. */
export function signInput(signingInput: string, agentPrivateKey: string): string {
  return toBase64Url(ed25519.sign(utf8ToBytes(signingInput), decodePrivateKey(agentPrivateKey) as Uint8Array));
}

export interface SignedPayment {
  prepared: PreparedPayment;
  body: { x402Version: 2; paymentPayload: Record<string, unknown> };
  idempotencyKey: string;
}

/** prepare_x402_payment, then the agent's signature: the capture body and its Idempotency-Key. */
export async function prepareAndSign(
  w: World,
  b: Pick<OnboardedBorrower, 'principal' | 'agentPrivateKey'>,
  m: ProvisionedMerchant,
  amount: string,
  orderRef: string = `order-${newId().slice(0, 8)}`,
  opts: PrepareOptions = {},
): Promise<SignedPayment> {
  const deps = await agentDeps(w);
  return prepareAndSignRequired(w, b, paymentRequiredHeader(deps, m, amount), orderRef, opts);
}

/** As prepareAndSign, for a merchant's own PAYMENT-REQUIRED header (its order ref unless `orderRef` is given). */
export async function prepareAndSignRequired(
  w: World,
  b: Pick<OnboardedBorrower, 'principal' | 'agentPrivateKey'>,
  paymentRequired: string,
  orderRef?: string,
  opts: PrepareOptions = {},
): Promise<SignedPayment> {
  const deps = await agentDeps(w);
  const prepared = await preparePayment(deps, b.principal, { payment_required: paymentRequired, ...(orderRef !== undefined ? { order_ref: orderRef } : {}) }, opts);
  const paymentPayload = {
    x402Version: 2,
    resource: { url: prepared.voucher.resource },
    accepted: prepared.payment_requirements,
    payload: { voucher: prepared.voucher, signature: signInput(prepared.signing_input, b.agentPrivateKey) },
  };
  return { prepared, body: { x402Version: 2, paymentPayload }, idempotencyKey: prepared.idempotency_key };
}
