import { z } from 'zod';
import { AmountString } from '@credit-facilitator/wire/amounts';
import { isUuidV4 } from '@credit-facilitator/wire/ids';
import { decodePublicKey, UuidString } from '@credit-facilitator/wire/voucher';
import { ToolError } from '../domain/tool-errors.js';

/**
 * Tool inputs, snake_case as docs/agent-side.md names them. The MCP layer validates with these;
 * the services re-check what depends on state (stage, limits, ownership).
 */
export const IdempotencyKey = z.string().refine(isUuidV4, 'must be a UUID v4').transform((s) => s.toLowerCase());
/** Long-poll for a signing step's outcome; capped so a tool call stays well inside HTTP timeouts. */
export const WaitSeconds = z.number().int().min(0).max(25).optional();
const UnixSeconds = z.number().int().positive().max(2 ** 40);
const isAmount = (s: unknown): boolean => AmountString.safeParse(s).success;

export const registerBorrowerInput = z.object({
  idempotency_key: IdempotencyKey,
  terminal_label: z.string().trim().min(1).max(64).optional(),
});

export const getBorrowerStatusInput = z.object({
  operational_agent_id: UuidString.optional(),
});

export const acceptCreditFacilityInput = z.object({
  idempotency_key: IdempotencyKey,
  wait_seconds: WaitSeconds,
});

export const registerAgentKeyInput = z
  .object({
    idempotency_key: IdempotencyKey,
    operational_agent_id: UuidString.optional(),
    public_key: z.string().refine((s) => decodePublicKey(s) !== null, 'must be a base64url Ed25519 public key (32 bytes, no padding)'),
    per_payment_limit: AmountString,
    daily_limit: AmountString,
    expires_at: UnixSeconds,
    wait_seconds: WaitSeconds,
  })
  // Zod runs this even when a limit failed its own check, so compare only well-formed amounts.
  .refine((v) => !isAmount(v.per_payment_limit) || !isAmount(v.daily_limit) || BigInt(v.per_payment_limit) <= BigInt(v.daily_limit), {
    message: 'per_payment_limit must not exceed daily_limit',
    path: ['per_payment_limit'],
  });

export const rotateAgentKeyInput = registerAgentKeyInput;

export const claimHandleInput = z.object({
  idempotency_key: IdempotencyKey,
  handle: z.string().min(3).max(32),
});

export const OrderRef = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII');

export const preparePaymentInput = z.object({
  /** The PAYMENT-REQUIRED header value (base64 JSON) or its decoded object. */
  payment_required: z.union([z.string().min(1).max(32_768), z.record(z.string(), z.unknown())]),
  order_ref: OrderRef.optional(),
  operational_agent_id: UuidString.optional(),
  idempotency_key: IdempotencyKey.optional(),
});

export const executeRepaymentInput = z.object({
  idempotency_key: IdempotencyKey,
  amount: AmountString,
  wait_seconds: WaitSeconds,
});

export type RegisterBorrowerInput = z.output<typeof registerBorrowerInput>;
export type GetBorrowerStatusInput = z.output<typeof getBorrowerStatusInput>;
export type AcceptCreditFacilityInput = z.output<typeof acceptCreditFacilityInput>;
export type RegisterAgentKeyInput = z.output<typeof registerAgentKeyInput>;
export type RotateAgentKeyInput = RegisterAgentKeyInput;
export type ClaimHandleInput = z.output<typeof claimHandleInput>;
export type PreparePaymentInput = z.output<typeof preparePaymentInput>;
export type ExecuteRepaymentInput = z.output<typeof executeRepaymentInput>;

/**
 * Parses a tool input or throws ToolError INVALID_INPUT with the field list. The services take parsed
 * input: on the MCP path the SDK parses it against these same schemas (src/mcp/tools/inputs.ts), once;
 * any other caller parses with this first.
 */
export function parseToolInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const fields = r.error.issues.map((i) => ({ path: i.path.length ? i.path.map(String).join('.') : '(input)', message: i.message }));
  throw new ToolError('INVALID_INPUT', `invalid input: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`, { fields });
}
