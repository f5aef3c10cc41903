import type { z } from 'zod';
import {
  acceptCreditFacilityInput,
  claimHandleInput,
  executeRepaymentInput,
  getBorrowerStatusInput,
  preparePaymentInput,
  registerAgentKeyInput,
  registerBorrowerInput,
  rotateAgentKeyInput,
} from '../../agents/schemas.js';

/**
 * The service layer's input schemas (src/agents/schemas.ts), with field descriptions added for
 * the agent reading tools/list. safeExtend keeps the schemas' own refinements.
 */
function described<S extends z.ZodObject>(schema: S, descriptions: Partial<Record<keyof S['shape'] & string, string>>): S {
  const shape = schema.shape as Record<string, z.ZodType>;
  const fields = Object.fromEntries(
    Object.entries(descriptions).flatMap(([name, text]) => {
      const field = shape[name];
      return field && typeof text === 'string' ? [[name, field.describe(text)]] : [];
    }),
  );
  return schema.safeExtend(fields) as unknown as S;
}

const COMMON = {
  idempotency_key: 'A fresh UUID v4 per action. The same key with the same arguments replays (or polls) that action; with other arguments it is IDEMPOTENCY_KEY_CONFLICT.',
  wait_seconds: 'Wait up to this many seconds (max 25) for the borrower to sign before answering.',
  operational_agent_id: 'Your terminal id from register_borrower; needed only when the borrower has several terminals.',
};

const keyFields = {
  idempotency_key: COMMON.idempotency_key,
  operational_agent_id: COMMON.operational_agent_id,
  public_key: "The agent's Ed25519 workload public key: 32 bytes, base64url without padding. Never send a private key.",
  per_payment_limit: 'Largest single payment this key may make, in asset base units (string).',
  daily_limit: 'Most this key may spend per UTC day, in asset base units (string); at least per_payment_limit.',
  expires_at: 'When the grant expires, unix seconds.',
  wait_seconds: COMMON.wait_seconds,
};

export const RegisterBorrowerInput = described(registerBorrowerInput, {
  idempotency_key: COMMON.idempotency_key,
  terminal_label: 'A name for this agent host install, shown to the borrower.',
});

export const GetBorrowerStatusInput = described(getBorrowerStatusInput, {
  operational_agent_id: 'Show only this terminal (default: all of the borrower\'s terminals).',
});

export const AcceptCreditFacilityInput = described(acceptCreditFacilityInput, {
  idempotency_key: COMMON.idempotency_key,
  wait_seconds: COMMON.wait_seconds,
});

export const RegisterAgentKeyInput = described(registerAgentKeyInput, keyFields);
export const RotateAgentKeyInput = described(rotateAgentKeyInput, keyFields);

export const ClaimHandleInput = described(claimHandleInput, {
  idempotency_key: COMMON.idempotency_key,
  handle: '3-32 characters of a-z 0-9 _ -, starting with a letter; unique across borrowers.',
});

export const PrepareX402PaymentInput = described(preparePaymentInput, {
  payment_required: "The merchant's PAYMENT-REQUIRED header value (base64 JSON), or its decoded object.",
  order_ref: 'The merchant order reference; defaults to accepts[].extra.orderRef. The same order_ref reuses the open spend intent.',
  operational_agent_id: COMMON.operational_agent_id,
  idempotency_key: 'Optional UUID v4 to use as the capture Idempotency-Key; generated when absent.',
});

export const ExecuteRepaymentInput = described(executeRepaymentInput, {
  idempotency_key: COMMON.idempotency_key,
  amount: 'Amount to repay in asset base units (string), at most the booked debt.',
  wait_seconds: COMMON.wait_seconds,
});
