import { decodePaymentRequiredHeader } from '@x402/core/http';
import { z } from 'zod';
import type { AgentDeps } from './deps.js';
import { evaluateAgentPolicy, spendDayId, utcDay } from '../domain/agent-policy.js';
import { AmountString } from '@credit-facilitator/wire/amounts';
import { fingerprint } from '@credit-facilitator/wire/canonical';
import { buildVoucher } from '@credit-facilitator/wire/credit-envelope';
import { PaymentRequirementsSchema, type PaymentRequirements } from '@credit-facilitator/wire/envelope';
import { isUuid, newId } from '@credit-facilitator/wire/ids';
import { voucherSigningInput, type Voucher } from '@credit-facilitator/wire/voucher';
import { chargeDailySpend, findSpendDay, refundDailySpend } from '../store/agent-spend.js';
import { findBorrower, holdCredit, listAgentKeys } from '../store/borrowers.js';
import type { AgentKeyDoc, SpendIntentDoc } from '../store/documents.js';
import { findMerchant } from '../store/merchants.js';
import { createSpendIntentDoc, findSpendIntentWithFate } from '../store/spend-intents.js';
import { claimToolRecord, deleteToolRecordIfStill, repointToolRecord } from '../store/tool-idempotency.js';
import { loadBorrower, requireStage, resolveOperationalAgent } from './context.js';
import { ToolError } from '../domain/tool-errors.js';
import { claimToolCall, releaseToolCall, toolIdempotencyId } from './idempotency.js';
import { OrderRef, type PreparePaymentInput } from './schemas.js';
import { ensureExpiryRunning, startExpiry, stopExpiry } from './spend-intent-expiry.js';
import type { BorrowerPrincipal } from './types.js';

export interface PreparedPayment {
  spend_intent_id: string;
  /** Send as Idempotency-Key with PAYMENT-SIGNATURE; one per order_ref. */
  idempotency_key: string;
  voucher: Voucher;
  /** The exact UTF-8 string to Ed25519-sign with the agent key. */
  signing_input: string;
  payment_requirements: Record<string, unknown>;
  expires_at: string;
  status: SpendIntentDoc['status'];
  reused: boolean;
}

/** Internal knobs for tests and operators; never reachable from tool input. */
export interface PrepareOptions {
  ttlSeconds?: number;
  /** Extra time after expiry before credit is released; default CLOCK_SKEW_SECONDS. */
  releaseGraceSeconds?: number;
}

const PaymentRequiredSchema = z.looseObject({
  x402Version: z.number().int(),
  resource: z.looseObject({ url: z.string().min(1).max(2048) }),
  accepts: z.array(z.unknown()).min(1).max(32),
});

const denied = (reason: string, message: string) => new ToolError('POLICY_DENIED', message, { reason });
const insufficientCredit = () => new ToolError('INSUFFICIENT_CREDIT', 'not enough available credit for this payment');
const invalid = (path: string, message: string) => new ToolError('INVALID_INPUT', `${path}: ${message}`, { fields: [{ path, message }] });

interface Terms {
  merchantId: string;
  payTo: string;
  amount: string;
  orderRef: string;
  resource: string;
  requirements: PaymentRequirements;
}

function decodePaymentRequired(raw: string | Record<string, unknown>): z.output<typeof PaymentRequiredSchema> {
  let obj: unknown = raw;
  if (typeof raw === 'string') {
    try {
      obj = decodePaymentRequiredHeader(raw.trim());
    } catch {
      throw invalid('payment_required', 'not a base64 PAYMENT-REQUIRED header value');
    }
  }
  const r = PaymentRequiredSchema.safeParse(obj);
  if (!r.success) throw invalid(`payment_required.${r.error.issues[0]?.path.map(String).join('.') ?? ''}`, r.error.issues[0]?.message ?? 'invalid');
  return r.data;
}

/** The accepted entry and the facts the voucher is built from; merchant, network and asset are policy. */
async function readTerms(deps: AgentDeps, raw: string | Record<string, unknown>, orderRefInput: string | undefined): Promise<Terms> {
  const pr = decodePaymentRequired(raw);
  const credit = pr.accepts.map((e) => PaymentRequirementsSchema.safeParse(e)).filter((r) => r.success && r.data.scheme === 'credit');
  const entry = credit.map((r) => r.data as PaymentRequirements).find((e) => e.network === deps.settlement.network) ?? credit[0]?.data;
  if (!entry) throw denied('unsupported_scheme', 'the merchant offers no "credit" payment option');
  if (entry.network !== deps.settlement.network) throw denied('invalid_network', `network ${entry.network} is not ${deps.settlement.network}`);
  if (entry.asset.toLowerCase() !== deps.settlement.asset.toLowerCase()) throw denied('invalid_asset', 'the asset is not the settlement asset');
  if (!AmountString.safeParse(entry.amount).success) throw invalid('payment_required.accepts.amount', 'must be a positive integer of base units');

  const orderRef = orderRefInput ?? entry.extra?.orderRef;
  const checkedRef = OrderRef.safeParse(orderRef);
  if (!checkedRef.success) throw invalid('order_ref', orderRef === undefined ? 'required (or accepts[].extra.orderRef)' : 'must be 1-128 printable ASCII characters');

  const merchantId = entry.extra?.merchantId;
  if (typeof merchantId !== 'string' || !isUuid(merchantId)) throw denied('unknown_merchant', 'accepts[].extra.merchantId does not name a merchant');
  const merchant = await findMerchant(deps.store.c, merchantId.toLowerCase());
  if (!merchant || merchant.status !== 'ACTIVE') throw denied('unknown_merchant', 'no active merchant with that merchantId');
  if (merchant.payoutAddress.toLowerCase() !== entry.payTo.toLowerCase()) throw denied('recipient_mismatch', "payTo is not the merchant's payout address");
  return { merchantId: merchant._id, payTo: entry.payTo.toLowerCase(), amount: entry.amount, orderRef: checkedRef.data, resource: pr.resource.url, requirements: entry };
}

/** The operational agent's single active key with a grant. */
function signingKey(keys: AgentKeyDoc[]): AgentKeyDoc {
  const usable = keys.filter((k) => k.status === 'active' && k.grant).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const key = usable[0];
  if (!key) throw denied('no_active_agent_key', 'the operational agent has no active agent key with a grant; register_agent_key first');
  return key;
}

function view(doc: SpendIntentDoc, reused: boolean): PreparedPayment {
  const voucher = doc.voucher as Voucher;
  return {
    spend_intent_id: doc._id,
    idempotency_key: doc.idempotencyKey,
    voucher,
    signing_input: voucherSigningInput(voucher),
    payment_requirements: doc.paymentRequirementsJson ? (JSON.parse(doc.paymentRequirementsJson) as Record<string, unknown>) : {},
    expires_at: new Date(doc.expiresAt * 1000).toISOString(),
    status: doc.status,
    reused,
  };
}

const isOpen = (doc: SpendIntentDoc, nowMs: number) => doc.status === 'RESERVED' && doc.expiresAt * 1000 > nowMs;

/**
 * prepare_x402_payment: checks policy, reserves credit (a hold keyed by the spend intent) and
 * returns the voucher for the agent to sign. One open spend intent per (merchant, order_ref):
 * a claim document in toolIdempotency names it, so retries and concurrent calls converge on it.
 */
export async function preparePayment(deps: AgentDeps, p: BorrowerPrincipal, args: PreparePaymentInput, opts: PrepareOptions = {}): Promise<PreparedPayment> {
  const c = deps.store.c;
  const b = await loadBorrower(deps, p);
  requireStage(b, 'ACTIVE');
  if (b.status !== 'ACTIVE') throw new ToolError('STAGE_REQUIRED', 'the borrower is not active', { required_stage: 'ACTIVE' });
  if (b.suspended) throw new ToolError('BORROWER_NOT_ACTIVE', 'the operator suspended this borrower: no new payments until reinstated', { reason: 'borrower_not_active' });
  const terms = await readTerms(deps, args.payment_required, args.order_ref);
  const agent = await resolveOperationalAgent(deps, p, args.operational_agent_id);
  const key = signingKey(await listAgentKeys(c, agent._id));

  const explicit = args.idempotency_key
    ? await claimToolCall(deps, p, { tool: 'prepare_x402_payment', key: args.idempotency_key, args, newRef: () => ({ spend_intent_id: newId() }) })
    : null;
  try {
    if (explicit?.replayed) {
      const earlier = await findSpendIntentWithFate(c, explicit.ref.spend_intent_id);
      if (earlier) return view(earlier, true);
    }
    const prepared = await prepareForOrder(deps, p, { terms, agentId: agent._id, key, candidateId: explicit?.ref.spend_intent_id ?? newId(), opts });
    if (explicit && prepared.spend_intent_id !== explicit.ref.spend_intent_id) {
      // The order already had an open intent, so the candidate was never created: the key names the real one.
      await repointToolRecord(c, toolIdempotencyId(p.borrowerId, args.idempotency_key as string), explicit.ref.spend_intent_id, prepared.spend_intent_id);
    }
    return prepared;
  } catch (err) {
    if (explicit && !explicit.replayed && err instanceof ToolError) await releaseToolCall(deps, p, args.idempotency_key as string, explicit.ref);
    throw err;
  }
}

const orderClaimId = (borrowerId: string, merchantId: string, orderRef: string) => `${borrowerId}:order:${merchantId}:${orderRef}`;
/** A claim whose intent never appeared is taken over after this long (its caller died mid-way). */
const ORPHAN_CLAIM_MS = 60_000;

async function prepareForOrder(
  deps: AgentDeps,
  p: BorrowerPrincipal,
  o: { terms: Terms; agentId: string; key: AgentKeyDoc; candidateId: string; opts: PrepareOptions },
): Promise<PreparedPayment> {
  const c = deps.store.c;
  const { terms } = o;
  const termsPrint = fingerprint({ agent: o.agentId, payTo: terms.payTo, amount: terms.amount, resource: terms.resource });
  const claimId = orderClaimId(p.borrowerId, terms.merchantId, terms.orderRef);
  return claimToolRecord<PreparedPayment>(c, {
    attempts: 5,
    doc: () => {
      const now = new Date(deps.nowMs());
      return {
        _id: claimId,
        borrowerId: p.borrowerId,
        tool: 'prepare_x402_payment#order',
        fingerprint: termsPrint,
        ref: { spend_intent_id: o.candidateId },
        createdAt: now,
        expiresAt: new Date(now.getTime() + 365 * 86400_000),
      };
    },
    won: () => createIntent(deps, p, o, o.candidateId, claimId, false),
    held: async (existing, mine) => {
      const id = String(existing.ref?.spend_intent_id);
      const intent = await findSpendIntentWithFate(c, id);
      if (intent && isOpen(intent, deps.nowMs())) {
        if (existing.fingerprint !== termsPrint) {
          throw new ToolError('INVALID_INPUT', 'this order_ref already has an open spend intent for other terms; use another order_ref', {
            spend_intent_id: id,
          });
        }
        return { answer: view(intent, true) };
      }
      if (intent || mine.createdAt.getTime() - existing.createdAt.getTime() > ORPHAN_CLAIM_MS) {
        // Closed (consumed or expired) or abandoned: the order may be paid again under a fresh intent.
        await deleteToolRecordIfStill(c, claimId, (d) => d.createdAt.getTime() === existing.createdAt.getTime());
        return 'retry';
      }
      // Another call is creating this very intent right now; creation is idempotent per id, so join it.
      if (existing.fingerprint !== termsPrint) throw new ToolError('INVALID_INPUT', 'this order_ref is being prepared with other terms', { spend_intent_id: id });
      return { answer: await createIntent(deps, p, o, id, claimId, true) };
    },
    unsettled: () => new ToolError('UNAVAILABLE', 'could not settle the order claim; retry'),
  });
}

/**
 * Creates spend intent `id` step by step, each step idempotent per id: start the expiry workflow
 * (so a crash never strands credit), charge the key's daily spend, hold credit, store the intent
 * with its voucher. A refusal undoes the charges, frees the order claim and stops the workflow
 * (see spend-intent-expiry.ts); what is refused anyway is refused before the workflow starts.
 */
async function createIntent(
  deps: AgentDeps,
  p: BorrowerPrincipal,
  o: { terms: Terms; agentId: string; key: AgentKeyDoc; opts: PrepareOptions },
  id: string,
  claimId: string,
  joined: boolean,
): Promise<PreparedPayment> {
  const c = deps.store.c;
  const { terms, key } = o;
  const grant = key.grant as NonNullable<AgentKeyDoc['grant']>;
  const nowMs = deps.nowMs();
  const nowS = Math.floor(nowMs / 1000);
  const dayId = spendDayId(key._id, utcDay(nowMs));
  const amount = Number(terms.amount);
  const ttl = Math.min(o.opts.ttlSeconds ?? deps.env.SPEND_INTENT_TTL_SECONDS, deps.env.VOUCHER_MAX_LIFETIME_SECONDS, Math.max(1, grant.expiresAt - nowS));
  const expiresAt = nowS + ttl;
  const expiry = { spendIntentId: id, borrowerId: p.borrowerId, spendDayId: dayId, releaseAtMs: (expiresAt + (o.opts.releaseGraceSeconds ?? deps.env.CLOCK_SKEW_SECONDS)) * 1000 };
  let started = false;
  const refuse = async (err: ToolError): Promise<never> => {
    await refundDailySpend(c, dayId, id);
    if (!joined) {
      await deleteToolRecordIfStill(c, claimId, (d) => d.ref?.spend_intent_id === id);
      if (started) await stopExpiry(deps, expiry);
    }
    throw err;
  };

  const day = await findSpendDay(c, dayId);
  const spentToday = (day?.spent ?? 0) - (day?.charges?.[id] ?? 0);
  const verdict = evaluateAgentPolicy({
    grant: { perPaymentLimit: BigInt(grant.perPaymentLimit), dailyLimit: BigInt(grant.dailyLimit), expiresAt: grant.expiresAt },
    amount: BigInt(terms.amount),
    spentToday: BigInt(spentToday),
    nowSeconds: nowS,
  });
  if (!verdict.ok) return refuse(denied(verdict.reason, `agent policy refuses this payment: ${verdict.reason}`));
  // Refuse what is already short of credit before anything is started; the hold below settles races.
  const borrower = await findBorrower(c, p.borrowerId);
  if (borrower && borrower.holds?.[id] === undefined && borrower.available < amount) return refuse(insufficientCredit());

  await startExpiry(deps, expiry);
  started = true;

  const charged = await chargeDailySpend(c, { dayId, agentKeyId: key._id, intentId: id, amount, dailyLimit: Number(grant.dailyLimit) });
  if (charged === 'over_limit') return refuse(denied('over_daily_limit', 'agent policy refuses this payment: over_daily_limit'));

  const held = await holdCredit(c, p.borrowerId, id, amount);
  if (held === 'insufficient_credit') return refuse(insufficientCredit());
  if (held === 'borrower_not_active') return refuse(new ToolError('BORROWER_NOT_ACTIVE', 'the borrower is not active or was suspended', { reason: 'borrower_not_active' }));
  if (joined) await ensureExpiryRunning(deps, expiry);

  // What the voucher says and the intent records alike.
  const facts = {
    borrowerId: p.borrowerId,
    operationalAgentId: o.agentId,
    merchantId: terms.merchantId,
    payTo: terms.payTo,
    amount: terms.amount,
    asset: deps.settlement.asset,
    network: deps.settlement.network,
    resource: terms.resource,
    orderRef: terms.orderRef,
  };
  const voucher = buildVoucher({ spendIntentId: id, ...facts, issuedAt: nowS, expiresAt });
  const stored = await createSpendIntentDoc(
    c,
    id,
    {
      ...facts,
      idempotencyKey: newId(),
      agentKeyId: key._id,
      voucher: voucher as unknown as Record<string, unknown>,
      paymentRequirementsJson: JSON.stringify(terms.requirements),
      expiresAt,
    },
    new Date(nowMs),
  );
  return view(stored.doc, joined || !stored.created);
}
