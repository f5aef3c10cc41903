/**
 * The agent grant's spending rules, checked by prepare_x402_payment before any credit moves.
 * Pure: the caller reads the grant, today's spend and the clock.
 */
export interface GrantLimits {
  perPaymentLimit: bigint;
  dailyLimit: bigint;
  /** Unix seconds. */
  expiresAt: number;
}

export type PolicyDenial = 'grant_expired' | 'over_per_payment_limit' | 'over_daily_limit';

export type PolicyVerdict = { ok: true } | { ok: false; reason: PolicyDenial };

export function evaluateAgentPolicy(input: { grant: GrantLimits; amount: bigint; spentToday: bigint; nowSeconds: number }): PolicyVerdict {
  const { grant, amount, spentToday, nowSeconds } = input;
  if (grant.expiresAt <= nowSeconds) return { ok: false, reason: 'grant_expired' };
  if (amount > grant.perPaymentLimit) return { ok: false, reason: 'over_per_payment_limit' };
  if (spentToday + amount > grant.dailyLimit) return { ok: false, reason: 'over_daily_limit' };
  return { ok: true };
}

/** The UTC calendar day (yyyy-mm-dd) daily limits are counted in. */
export function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/** Key of one agent key's spend on one UTC day. */
export function spendDayId(agentKeyId: string, day: string): string {
  return `${agentKeyId}:${day}`;
}

/** The borrower's EIP-712 AgentGrant for one agent key. */
export interface AgentGrant {
  perPaymentLimit: string;
  dailyLimit: string;
  /** Unix seconds. */
  expiresAt: number;
  nonce: string;
  signature: string;
  /** The signing request that carried it; absent when the borrower signed it on their own page (a lowered limit). */
  signingRequestId?: string;
}
