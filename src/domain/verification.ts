import type { InvalidReason } from '@credit-facilitator/wire/invalid-reasons';
import { parsePaymentRequirements, type PaymentRequirements } from '@credit-facilitator/wire/envelope';
import { decodePublicKey, parseVoucher, verifyVoucherSignature, type Voucher } from '@credit-facilitator/wire/voucher';
import type { PaymentTerms } from '@credit-facilitator/wire/payment-terms';

export interface AgentKeyRecord {
  keyId: string;
  publicKey: string /* base64url */;
  status: 'active' | 'revoked';
  borrowerId: string;
  operationalAgentId: string;
}

export interface BorrowerRecord {
  borrowerId: string;
  status: string /* 'ACTIVE' when it may spend */;
}

export interface SpendIntentRecord extends PaymentTerms {
  spendIntentId: string;
  status: 'RESERVED' | 'CONSUMED' | 'RELEASED' | 'EXPIRED';
  expiresAt: number;
  consumedByVoucherId?: string;
}

export interface VerificationContext {
  now: number;
  clockSkewSeconds: number;
  maxLifetimeSeconds: number;
  network: string;
  asset: string;
  merchant: { merchantId: string; payoutAddress: string };
  agentKeys: AgentKeyRecord[] /* all keys of voucher.operationalAgentId */;
  borrower: BorrowerRecord | null;
  spendIntent: SpendIntentRecord | null;
  voucherAlreadyUsed: boolean;
}

export type VerificationResult = { ok: true; payer: string } | { ok: false; reason: InvalidReason; payer?: string };

export interface VerificationInput {
  voucher: Voucher;
  signature: string;
  accepted?: PaymentRequirements;
  requirements?: PaymentRequirements;
}

/** Ids, addresses and assets compare case-insensitively; everything else exactly. */
const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

function requirementsMismatch(r: PaymentRequirements, v: Voucher): InvalidReason | null {
  if (r.scheme !== 'credit') return 'unsupported_scheme';
  if (r.amount !== v.amount) return 'amount_mismatch';
  if (!same(r.payTo, v.payTo)) return 'recipient_mismatch';
  return null;
}

function checkSignature(v: Voucher, signature: string, keys: AgentKeyRecord[]): InvalidReason | null {
  const own = keys.filter((k) => same(k.borrowerId, v.borrowerId) && same(k.operationalAgentId, v.operationalAgentId));
  if (own.length === 0) return 'unknown_agent_key';
  const verifiesUnder = (k: AgentKeyRecord): boolean => {
    const pub = decodePublicKey(k.publicKey);
    return pub !== null && verifyVoucherSignature(v, signature, pub);
  };
  if (own.some((k) => k.status === 'active' && verifiesUnder(k))) return null;
  if (own.some((k) => k.status === 'revoked' && verifiesUnder(k))) return 'agent_key_revoked';
  return 'invalid_signature';
}

function checkSpendIntent(v: Voucher, si: SpendIntentRecord | null, now: number): InvalidReason | null {
  if (
    si === null ||
    !same(si.spendIntentId, v.spendIntentId) ||
    !same(si.borrowerId, v.borrowerId) ||
    !same(si.operationalAgentId, v.operationalAgentId) ||
    !same(si.merchantId, v.merchantId) ||
    !same(si.payTo, v.payTo) ||
    si.amount !== v.amount ||
    !same(si.asset, v.asset) ||
    si.network !== v.network ||
    si.orderRef !== v.orderRef
  ) {
    return 'unknown_spend_intent';
  }
  if (si.status === 'CONSUMED') {
    // Consumed by this very voucher: a capture resuming after a crash, not a second use.
    return si.consumedByVoucherId !== undefined && same(si.consumedByVoucherId, v.voucherId)
      ? null
      : 'voucher_already_used';
  }
  if (si.status !== 'RESERVED' || si.expiresAt <= now) return 'unknown_spend_intent';
  return null;
}

function firstFailure(input: VerificationInput, v: Voucher, ctx: VerificationContext): InvalidReason | null {
  const { accepted, requirements } = input;
  const echoes = [requirements, accepted].filter((r): r is PaymentRequirements => r !== undefined);

  if (v.network !== ctx.network || echoes.some((r) => r.network !== ctx.network)) return 'invalid_network';
  if (!same(v.asset, ctx.asset) || echoes.some((r) => !same(r.asset, ctx.asset))) return 'invalid_asset';
  for (const r of echoes) {
    const m = requirementsMismatch(r, v);
    if (m) return m;
  }
  if (!same(v.merchantId, ctx.merchant.merchantId) || !same(v.payTo, ctx.merchant.payoutAddress)) {
    return 'recipient_mismatch';
  }

  if (v.issuedAt > ctx.now + ctx.clockSkewSeconds) return 'voucher_not_yet_valid';
  if (v.expiresAt <= ctx.now) return 'voucher_expired';
  if (v.expiresAt <= v.issuedAt || v.expiresAt - v.issuedAt > ctx.maxLifetimeSeconds) return 'policy_denied';

  const sig = checkSignature(v, input.signature, ctx.agentKeys);
  if (sig) return sig;

  if (ctx.borrower === null || ctx.borrower.status !== 'ACTIVE' || !same(ctx.borrower.borrowerId, v.borrowerId)) {
    return 'borrower_not_active';
  }
  if (ctx.voucherAlreadyUsed) return 'voucher_already_used';
  return checkSpendIntent(v, ctx.spendIntent, ctx.now);
}

/**
 * The verification rules, in order; the first failure wins. Pure: the caller loads the keys,
 * borrower and spend intent and passes `now`. Never throws: inputs that are not what the
 * types promise come back as invalid_payload / invalid_payment_requirements.
 */
export function evaluateVoucher(input: VerificationInput, ctx: VerificationContext): VerificationResult {
  const parsed = parseVoucher(input?.voucher);
  if (!parsed.ok) return { ok: false, reason: 'invalid_payload' };
  const voucher = parsed.voucher;
  const payer = voucher.borrowerId;
  if (typeof input.signature !== 'string') return { ok: false, reason: 'invalid_payload', payer };
  for (const r of [input.accepted, input.requirements]) {
    if (r !== undefined && !parsePaymentRequirements(r).ok) {
      return { ok: false, reason: 'invalid_payment_requirements', payer };
    }
  }
  const reason = firstFailure(input, voucher, ctx);
  return reason === null ? { ok: true, payer } : { ok: false, reason, payer };
}
