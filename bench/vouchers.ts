/**
 * Signed captures for the load levels, prepared before the clock starts (the agent's cost, not the
 * facilitator's). A small share goes through the real prepare_x402_payment service; the volume
 * takes a bench-only path that writes what createSpendIntent writes (a credit hold keyed by the
 * intent id, then the RESERVED intent) and signs each voucher with the borrower's agent key as the
 * agent's signer does. When one createSpendIntent per voucher is too slow for the run's budget,
 * holds are taken in bulk (one borrower change per borrower) and the intents inserted with
 * insertMany, in createSpendIntent's exact document shape.
 */
import type { PaymentRequirements } from '@credit-facilitator/wire/envelope';
import { buildVoucher, signedCreditPayload } from '@credit-facilitator/wire/credit-envelope';
import { newId } from '@credit-facilitator/wire/ids';
import { decodePrivateKey } from '@credit-facilitator/wire/voucher';
import { createSpendIntent, type SpendIntentRequest } from '../src/payments/spend-intents.js';
import { changeBorrower } from '../src/store/borrower-changes.js';
import type { SpendIntentDoc } from '../src/store/documents.js';
import { agentDeps } from '../tools/harness/agent-deps.js';
import { prepareAndSign } from '../tools/harness/signed-payment.js';
import type { ProvisionedMerchant } from '../tools/harness/merchants.js';
import type { OnboardedBorrower } from '../tools/harness/onboarding.js';
import type { World } from '../tools/harness/world.js';
import type { LoadVoucher } from './open-loop.js';
import { mapPool } from './stats.js';

export type VoucherPath = 'mcp' | 'intent' | 'bulk';

export interface PreparedVoucher extends LoadVoucher {
  via: VoucherPath;
  merchantId: string;
  borrowerId: string;
  spendIntentId: string;
  amount: number;
}

export interface VoucherBatch {
  vouchers: PreparedVoucher[];
  /** Vouchers per second each path managed in this batch (absent when the path was not used). */
  perSecond: Partial<Record<VoucherPath, number>>;
  counts: Record<VoucherPath, number>;
  seconds: number;
}

export interface VoucherSource {
  w: World;
  merchants: readonly ProvisionedMerchant[];
  borrowers: readonly OnboardedBorrower[];
  amount: string;
  /** How many of each batch go through the real prepare_x402_payment. */
  mcpShare: number;
  /** Seconds the per-voucher createSpendIntent path may take for a batch before bulk takes over. */
  budgetSeconds: number;
}

const RESOURCE = 'http://127.0.0.1:9000/premium';

interface Job {
  merchant: ProvisionedMerchant;
  borrower: OnboardedBorrower;
}

/** Merchant i mod M; the borrower shifts every round of merchants, so pairs mix. */
function jobs(src: VoucherSource, count: number): Job[] {
  const M = src.merchants.length;
  const B = src.borrowers.length;
  return Array.from({ length: count }, (_, i) => ({ merchant: src.merchants[i % M] as ProvisionedMerchant, borrower: src.borrowers[(i + Math.floor(i / M)) % B] as OnboardedBorrower }));
}

/** The merchant's accepted offer, as the bench's PAYMENT-REQUIRED header carries it (tools/harness/payment-required.ts). */
function accepted(settlement: { network: string; asset: string }, m: ProvisionedMerchant, amount: string): PaymentRequirements {
  return { scheme: 'credit', network: settlement.network, asset: settlement.asset, amount, payTo: m.payoutAddress, maxTimeoutSeconds: 600, extra: { merchantId: m.merchantId } } as PaymentRequirements;
}

/** createSpendIntent's request, built in the order the dev voucher command builds it. */
function intentRequest(settlement: { network: string; asset: string }, j: Job, amount: string, ttlSeconds: number): SpendIntentRequest {
  return {
    borrowerId: j.borrower.borrowerId,
    operationalAgentId: j.borrower.operationalAgentId,
    merchantId: j.merchant.merchantId,
    payTo: j.merchant.payoutAddress,
    amount,
    asset: settlement.asset,
    network: settlement.network,
    orderRef: `order-${newId().slice(0, 8)}`,
    resource: RESOURCE,
    idempotencyKey: newId(),
    expiresAt: Math.floor(Date.now() / 1000) + ttlSeconds,
  };
}

/** The document createSpendIntent inserts for `req` (same fields, same order). */
function intentDoc(id: string, req: SpendIntentRequest, now: Date): SpendIntentDoc {
  return { _id: id, ...req, payTo: req.payTo.toLowerCase(), asset: req.asset.toLowerCase(), status: 'RESERVED', createdAt: now };
}

const keys = new Map<string, Uint8Array>();
function agentKey(b: OnboardedBorrower): Uint8Array {
  let k = keys.get(b.agentPrivateKey);
  if (!k) {
    k = decodePrivateKey(b.agentPrivateKey) as Uint8Array;
    keys.set(b.agentPrivateKey, k);
  }
  return k;
}

/** The agent's side: the voucher for the intent, Ed25519-signed with the borrower's agent key. */
function signFor(settlement: { network: string; asset: string }, j: Job, intent: SpendIntentDoc, via: VoucherPath): PreparedVoucher {
  const voucher = buildVoucher({
    spendIntentId: intent._id,
    borrowerId: intent.borrowerId,
    operationalAgentId: intent.operationalAgentId,
    merchantId: intent.merchantId,
    payTo: intent.payTo,
    amount: intent.amount,
    asset: intent.asset,
    network: intent.network,
    resource: intent.resource,
    orderRef: intent.orderRef,
    issuedAt: Math.floor(intent.createdAt.getTime() / 1000),
    expiresAt: intent.expiresAt,
  });
  const paymentPayload = signedCreditPayload(voucher, agentKey(j.borrower), accepted(settlement, j.merchant, intent.amount));
  return {
    apiKey: j.merchant.apiKey,
    body: JSON.stringify({ x402Version: 2, paymentPayload }),
    idempotencyKey: intent.idempotencyKey,
    via,
    merchantId: j.merchant.merchantId,
    borrowerId: j.borrower.borrowerId,
    spendIntentId: intent._id,
    amount: Number(intent.amount),
  };
}

/** One borrower change holds credit for all of `group`, then the intents go in with insertMany. */
async function bulkIntents(src: VoucherSource, settlement: { network: string; asset: string }, group: Job[], ttlSeconds: number): Promise<PreparedVoucher[]> {
  const c = src.w.store.c;
  const borrowerId = (group[0] as Job).borrower.borrowerId;
  const now = new Date();
  const docs = group.map((j) => intentDoc(newId(), intentRequest(settlement, j, src.amount, ttlSeconds), now));
  const total = docs.reduce((s, d) => s + Number(d.amount), 0);
  const held = await changeBorrower(c, borrowerId, (b) => {
    if (!b || b.status !== 'ACTIVE') return { result: 'borrower_not_active' };
    if (b.available < total) return { result: 'insufficient_credit' };
    return { result: 'held', change: { available: b.available - total, holds: { ...b.holds, ...Object.fromEntries(docs.map((d) => [d._id, Number(d.amount)])) } } };
  });
  if (held !== 'held') throw new Error(`bulk hold for borrower ${borrowerId}: ${held}`);
  for (let i = 0; i < docs.length; i += 1000) await c.spendIntents.insertMany(docs.slice(i, i + 1000), { ordered: false });
  return docs.map((d, k) => signFor(settlement, group[k] as Job, d, 'bulk'));
}

/** `count` signed captures, spread over every merchant and borrower. */
export async function prepareVouchers(src: VoucherSource, count: number): Promise<VoucherBatch> {
  const t0 = performance.now();
  const deps = await agentDeps(src.w);
  const settlement = deps.settlement;
  const ttlSeconds = deps.env.SPEND_INTENT_TTL_SECONDS;
  const all = jobs(src, count);
  const out: PreparedVoucher[] = new Array(count);
  const perSecond: VoucherBatch['perSecond'] = {};
  const counts: Record<VoucherPath, number> = { mcp: 0, intent: 0, bulk: 0 };

  // The real service for a few, spread evenly through the batch.
  const mcpCount = Math.min(src.mcpShare, count);
  const mcpIdx = new Set(Array.from({ length: mcpCount }, (_, k) => Math.floor(((k + 0.5) * count) / mcpCount)));
  const rest = all.map((_, i) => i).filter((i) => !mcpIdx.has(i));
  if (mcpCount > 0) {
    const t = performance.now();
    await mapPool([...mcpIdx], 4, async (i) => {
      const j = all[i] as Job;
      const signed = await prepareAndSign(src.w, j.borrower, j.merchant, src.amount);
      out[i] = {
        apiKey: j.merchant.apiKey,
        body: JSON.stringify(signed.body),
        idempotencyKey: signed.idempotencyKey,
        via: 'mcp',
        merchantId: j.merchant.merchantId,
        borrowerId: j.borrower.borrowerId,
        spendIntentId: signed.prepared.spend_intent_id,
        amount: Number(src.amount),
      };
    });
    perSecond.mcp = mcpCount / ((performance.now() - t) / 1000);
    counts.mcp = mcpCount;
  }

  // createSpendIntent one by one on a probe; the rest the same way if the budget allows, else in bulk.
  const probe = rest.slice(0, Math.min(rest.length, 100));
  let t = performance.now();
  await mapPool(probe, 8, async (i) => {
    const j = all[i] as Job;
    const intent = await createSpendIntent(src.w.store.c, intentRequest(settlement, j, src.amount, ttlSeconds), new Date());
    out[i] = signFor(settlement, j, intent, 'intent');
  });
  const intentRate = probe.length / ((performance.now() - t) / 1000);
  if (probe.length > 0) perSecond.intent = intentRate;
  counts.intent = probe.length;
  const remaining = rest.slice(probe.length);
  if (remaining.length > 0 && remaining.length / intentRate <= src.budgetSeconds) {
    t = performance.now();
    await mapPool(remaining, 8, async (i) => {
      const j = all[i] as Job;
      const intent = await createSpendIntent(src.w.store.c, intentRequest(settlement, j, src.amount, ttlSeconds), new Date());
      out[i] = signFor(settlement, j, intent, 'intent');
    });
    perSecond.intent = (probe.length + remaining.length) / ((performance.now() - t) / 1000 + probe.length / intentRate);
    counts.intent += remaining.length;
  } else if (remaining.length > 0) {
    t = performance.now();
    const byBorrower = new Map<string, number[]>();
    for (const i of remaining) {
      const id = (all[i] as Job).borrower.borrowerId;
      byBorrower.set(id, [...(byBorrower.get(id) ?? []), i]);
    }
    await mapPool([...byBorrower.values()], 4, async (idx) => {
      const made = await bulkIntents(src, settlement, idx.map((i) => all[i] as Job), ttlSeconds);
      idx.forEach((i, k) => (out[i] = made[k] as PreparedVoucher));
    });
    perSecond.bulk = remaining.length / ((performance.now() - t) / 1000);
    counts.bulk = remaining.length;
  }
  return { vouchers: out, perSecond, counts, seconds: (performance.now() - t0) / 1000 };
}

/**
 * Gives back the credit held for bench-path vouchers that were never captured (not sent, or
 * refused with an answer, and whose spend intent has no fate), so borrower documents do not grow
 * with dead holds from level to level. Captures that went unanswered are left alone by the caller:
 * the service may still be working on them. `consumed` counts the vouchers given whose spend
 * intent was consumed all the same (a refused capture that became a payment).
 */
export async function releaseUnused(w: World, vouchers: readonly PreparedVoucher[]): Promise<{ released: number; consumed: number }> {
  const c = w.store.c;
  const decided = new Set<string>();
  let consumed = 0;
  for (let i = 0; i < vouchers.length; i += 1000) {
    const ids = vouchers.slice(i, i + 1000).map((v) => v.spendIntentId);
    for (const f of await c.spendIntentFates.find({ _id: { $in: ids } }, { projection: { _id: 1, fate: 1 } }).toArray()) {
      decided.add(f._id);
      if (f.fate === 'CONSUMED') consumed++;
    }
  }
  const byBorrower = new Map<string, PreparedVoucher[]>();
  for (const v of vouchers) if (v.via !== 'mcp' && !decided.has(v.spendIntentId)) byBorrower.set(v.borrowerId, [...(byBorrower.get(v.borrowerId) ?? []), v]);
  let released = 0;
  await mapPool([...byBorrower], 4, async ([borrowerId, vs]) => {
    released += await changeBorrower(c, borrowerId, (b) => {
      if (!b) return { result: 0 };
      const holds = { ...b.holds };
      let back = 0;
      let n = 0;
      for (const v of vs) {
        const amount = holds[v.spendIntentId];
        if (amount === undefined) continue;
        delete holds[v.spendIntentId];
        back += amount;
        n++;
      }
      return n === 0 ? { result: 0 } : { result: n, change: { holds, available: b.available + back } };
    });
  });
  return { released, consumed };
}
