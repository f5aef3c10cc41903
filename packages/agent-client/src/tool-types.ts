import { z } from 'zod';
import { PreparedPaymentSchema } from './voucher-signer.js';
import { SigningStepOutput as SigningStepSchema } from '@credit-facilitator/wire/tool-outputs';

/**
 * Output shapes of the service's tools (docs/agent-side.md), checked as they arrive. Unknown keys
 * pass through. The signing step is the very schema the MCP endpoint declares.
 */
export type SigningStepResult = z.infer<typeof SigningStepSchema>;

export const RegisterBorrowerSchema = z.looseObject({
  borrower_id: z.string(),
  operational_agent_id: z.string(),
  stage: z.string(),
  wallet_address: z.string(),
  scopes_unlocked: z.array(z.string()),
});

const AgentKeySchema = z.looseObject({
  key_id: z.string(),
  public_key: z.string(),
  status: z.string(),
  per_payment_limit: z.string().optional(),
  daily_limit: z.string().optional(),
  expires_at: z.union([z.number(), z.string()]).optional(),
});

export const BorrowerStatusSchema = z.looseObject({
  borrower_id: z.string(),
  stage: z.string(),
  handle: z.string().nullable().optional(),
  wallet_address: z.string(),
  scopes_unlocked: z.array(z.string()),
  token_scopes: z.array(z.string()),
  credit: z
    .looseObject({
      limit: z.string(),
      available: z.string(),
      held: z.string(),
      debt: z.string(),
      asset: z.string(),
      network: z.string(),
    })
    .nullable()
    .optional(),
  operational_agents: z.array(
    z.looseObject({ operational_agent_id: z.string(), label: z.string().nullable().optional(), agent_keys: z.array(AgentKeySchema) }),
  ),
  pending_signatures: z.array(z.unknown()),
  next_step: z.unknown().optional(),
});

export const ClaimHandleSchema = z.looseObject({ handle: z.string(), stage: z.string() });

export const TOOL_OUTPUTS = {
  register_borrower: RegisterBorrowerSchema,
  get_borrower_status: BorrowerStatusSchema,
  accept_credit_facility: SigningStepSchema,
  register_agent_key: SigningStepSchema,
  rotate_agent_key: SigningStepSchema,
  claim_handle: ClaimHandleSchema,
  prepare_x402_payment: PreparedPaymentSchema,
  execute_repayment: SigningStepSchema,
} as const;
export type CreditToolName = keyof typeof TOOL_OUTPUTS;
export type ToolOutput<T extends CreditToolName> = z.infer<(typeof TOOL_OUTPUTS)[T]>;

/** Tools whose result is a SigningStep the borrower's wallet completes. */
export type SigningToolName = 'accept_credit_facility' | 'register_agent_key' | 'rotate_agent_key' | 'execute_repayment';

export interface RegisterBorrowerArgs {
  idempotency_key: string;
  terminal_label?: string;
}
export interface BorrowerStatusArgs {
  operational_agent_id?: string;
}
export interface AcceptFacilityArgs {
  idempotency_key: string;
  wait_seconds?: number;
}
export interface AgentKeyArgs {
  idempotency_key: string;
  operational_agent_id?: string;
  /** base64url Ed25519 public key; defaults to the agent's workload key. */
  public_key?: string;
  per_payment_limit: string;
  daily_limit: string;
  /** Unix seconds. */
  expires_at: number;
  wait_seconds?: number;
}
export interface ClaimHandleArgs {
  idempotency_key: string;
  handle: string;
}
export interface PrepareX402Args {
  payment_required: string | Record<string, unknown>;
  order_ref?: string;
  operational_agent_id?: string;
  idempotency_key?: string;
}
export interface RepaymentArgs {
  idempotency_key: string;
  amount: string;
  wait_seconds?: number;
}

/** A tool answered with isError: code and message from its structured error. */
export class CreditToolError extends Error {
  override readonly name = 'CreditToolError';
  constructor(
    readonly tool: string,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(`${tool}: ${code}: ${message}`);
  }
}
