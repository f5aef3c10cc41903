import { z } from 'zod';

/** Output schemas: loose objects, so a field the service adds later never breaks a client's validation. */
const scopes = z.array(z.string());

export const SigningStepOutput = z.looseObject({
  status: z.enum(['signature_required', 'processing', 'completed', 'failed', 'expired']),
  signing_request_id: z.string(),
  signing_url: z.string(),
  typed_data: z.record(z.string(), z.unknown()),
  expires_at: z.string(),
  result: z.record(z.string(), z.unknown()).optional(),
  failure_reason: z.string().optional(),
});

export const RegisterBorrowerOutput = z.looseObject({
  borrower_id: z.string(),
  operational_agent_id: z.string(),
  stage: z.string(),
  wallet_address: z.string().nullable().optional(),
  scopes_unlocked: scopes,
});

export const BorrowerStatusOutput = z.looseObject({
  borrower_id: z.string(),
  stage: z.string(),
  handle: z.string().nullable().optional(),
  wallet_address: z.string().nullable().optional(),
  scopes_unlocked: scopes,
  token_scopes: scopes,
  credit: z.looseObject({}).nullable().optional(),
  operational_agents: z.array(z.looseObject({})).optional(),
  pending_signatures: z.array(z.unknown()).optional(),
  next_step: z.unknown().optional(),
});

export const ClaimHandleOutput = z.looseObject({ handle: z.string(), stage: z.string() });

export const PreparePaymentOutput = z.looseObject({
  spend_intent_id: z.string(),
  idempotency_key: z.string(),
  voucher: z.record(z.string(), z.unknown()),
  signing_input: z.string(),
  payment_requirements: z.record(z.string(), z.unknown()),
  expires_at: z.union([z.number(), z.string()]),
  reused: z.boolean(),
});
