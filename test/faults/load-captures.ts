import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planArrivals, runOpenLoop, type CaptureRecord, type OpenLoopResult } from '../../bench/open-loop.js';
import { mapPool } from '../../bench/stats.js';
import { prepareVouchers, type PreparedVoucher, type VoucherSource } from '../../bench/vouchers.js';
import { settledEventsFor } from '../helpers/ledger.js';
import type { CapturedPayment } from '../helpers/captures.js';
import { onboardBorrower, type OnboardedBorrower } from '../helpers/onboarding.js';
import { newMerchant, UNTHROTTLED, type TestMerchant, type World } from '../helpers/world.js';

/**
 * Open-loop captures over several API processes for the fault suites (under-load, scale-out):
 * the parties, the load, the first answers, the retries that decide what the first answers left
 * open, and the count of PaymentSettled events per accepted payment.
 */

/** One capture the open loop sent (or meant to), with the voucher it carried and the API it went to. */
export interface Sent {
  record: CaptureRecord;
  voucher: PreparedVoucher;
  baseUrl: string;
  startEpochMs: number;
}

export interface LoadParties {
  merchants: TestMerchant[];
  borrowers: OnboardedBorrower[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `count` unthrottled merchants and `count` borrowers with room for the whole load. */
export async function loadParties(w: World, count: number, label: string): Promise<LoadParties> {
  const merchants = await mapPool(Array.from({ length: count }), 3, (_, i) => newMerchant(w, `${label} ${i + 1}`, { rateLimits: UNTHROTTLED }));
  const borrowers = await mapPool(Array.from({ length: count }), 3, () => onboardBorrower(w, { perPaymentLimit: '1000000', dailyLimit: '1000000000000' }));
  return { merchants, borrowers };
}

/** Each API's share of `rate` over the window: its arrival times and a signed voucher for each. */
export interface ApiLoad {
  baseUrl: string;
  arrivals: number[];
  vouchers: PreparedVoucher[];
}

/** Plans the arrivals and signs every voucher before the load starts (spend intents must outlive the window). */
export async function planLoad(w: World, parties: LoadParties, apis: readonly string[], rate: number, windowSeconds: number): Promise<ApiLoad[]> {
  const source: VoucherSource = { w, ...parties, amount: '1000', mcpShare: 0, budgetSeconds: 5 };
  const out: ApiLoad[] = [];
  for (const baseUrl of apis) {
    const arrivals = planArrivals(rate / apis.length, windowSeconds);
    out.push({ baseUrl, arrivals, vouchers: (await prepareVouchers(source, arrivals.length)).vouchers });
  }
  return out;
}

/** Runs the planned load on every API at once, merchants polling each 200 until it is terminal. */
export async function runLoad(plan: readonly ApiLoad[], rate: number, windowSeconds: number, drainSeconds: number): Promise<{ loads: OpenLoopResult[]; sent: Sent[] }> {
  const loads = await Promise.all(
    plan.map((p) => runOpenLoop({ baseUrl: p.baseUrl, rate: rate / plan.length, seconds: windowSeconds, vouchers: p.vouchers, arrivals: p.arrivals, drainSeconds })),
  );
  const sent = loads.flatMap((l, i) => l.records.map((record, j) => ({ record, voucher: plan[i]!.vouchers[j]!, baseUrl: plan[i]!.baseUrl, startEpochMs: l.startEpochMs })));
  return { loads, sent };
}

export interface FirstAnswers {
  accepted: number;
  shed503: number;
  rateLimited429: number;
  otherRefusals: number;
  noAnswer: number;
  notSent: number;
}

/** How the captures were first answered; `otherRefusals` are the ones no retry may turn into a 200. */
export function firstAnswersOf(sent: readonly Sent[]): FirstAnswers {
  const counts: FirstAnswers = { accepted: 0, shed503: 0, rateLimited429: 0, otherRefusals: 0, noAnswer: 0, notSent: 0 };
  for (const s of sent) {
    const o = s.record.outcome;
    if (o === 'accepted') counts.accepted++;
    else if (o === 'shed_unavailable') counts.shed503++;
    else if (o === 'shed_rate_limited') counts.rateLimited429++;
    else if (o === 'not_sent') counts.notSent++;
    else if (o === 'unanswered' || s.record.code?.startsWith('network')) counts.noAnswer++;
    else counts.otherRefusals++;
  }
  return counts;
}

/** Captures refused for good on their first answer (neither shed nor unanswered). */
export function refusedForGood(sent: readonly Sent[]): Sent[] {
  return sent.filter((s) => s.record.outcome === 'error' && !s.record.code?.startsWith('network'));
}

/** The API processes' logged request failures (500s), for an assertion's message: what the answer alone does not say. */
export function loggedRequestFailures(dataDir: string, max = 5): string[] {
  const dir = join(dataDir, 'logs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith('api') && f.endsWith('.log'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter((line) => line.includes('"msg":"request failed"')).map((line) => `${f}: ${line}`))
    .slice(0, max);
}

/** The answer a merchant finally gets by retrying the same capture (same key, same body) while it answers 503, 429 or nothing. */
export async function retryUntilDecided(baseUrl: string, v: PreparedVoucher): Promise<{ status: number; paymentId?: string; code?: string }> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const res = await fetch(`${baseUrl}/facilitator/capture`, {
        method: 'POST',
        headers: { authorization: `Bearer ${v.apiKey}`, 'content-type': 'application/json', 'idempotency-key': v.idempotencyKey },
        body: v.body,
      });
      const json = (await res.json()) as { receipt?: { paymentId?: string }; error?: { code?: string } };
      if (res.status !== 503 && res.status !== 429) {
        return { status: res.status, ...(json.receipt?.paymentId ? { paymentId: json.receipt.paymentId } : {}), ...(json.error?.code ? { code: json.error.code } : {}) };
      }
    } catch {
      // not answering yet: retry
    }
    if (Date.now() > deadline) throw new Error(`capture ${v.idempotencyKey} still undecided after 120 s of retries`);
    await sleep(1_000);
  }
}

/**
 * The payments a load's captures made: those accepted at once, and the undecided ones retried (same
 * key, same body) until they answer, each of which must then be accepted. Asserts that no valid
 * voucher was refused for good and that each capture made one payment.
 */
export async function acceptedAfterRetries(
  sent: readonly Sent[],
  baseUrl: string,
  merchants: readonly TestMerchant[],
  dataDir: string,
): Promise<{ accepted: CapturedPayment[]; firstAnswers: FirstAnswers; resolvedByRetry: number }> {
  const firstAnswers = firstAnswersOf(sent);
  assert.equal(firstAnswers.otherRefusals, 0, `no capture of a valid voucher is refused for good: ${JSON.stringify(refusedForGood(sent).map((s) => s.record).slice(0, 3))}; logged ${loggedRequestFailures(dataDir).join(' | ')}`);
  const undecided = sent.filter((s) => s.record.outcome !== 'accepted');
  const retried = await mapPool(undecided, 8, async (s) => ({ s, answer: await retryUntilDecided(baseUrl, s.voucher) }));
  for (const r of retried) assert.equal(r.answer.status, 200, `a retry of the same capture is accepted: ${JSON.stringify(r.answer)}`);
  const accepted = [
    ...sent.filter((s) => s.record.outcome === 'accepted').map((s) => capturedPayment(merchants, s.voucher, s.record.paymentId!)),
    ...retried.map((r) => capturedPayment(merchants, r.s.voucher, r.answer.paymentId!)),
  ];
  assert.equal(new Set(accepted.map((p) => p.paymentId)).size, accepted.length, 'one payment per capture');
  return { accepted, firstAnswers, resolvedByRetry: retried.length };
}

/** The payment a capture made, with what it must add up to in the ledger. */
export function capturedPayment(merchants: readonly TestMerchant[], v: PreparedVoucher, paymentId: string): CapturedPayment {
  const merchant = merchants.find((m) => m.merchantId === v.merchantId);
  if (!merchant) throw new Error(`voucher of unknown merchant ${v.merchantId}`);
  return { paymentId, amount: BigInt(v.amount), merchant, borrowerId: v.borrowerId };
}

export interface SettlementCount {
  events: Awaited<ReturnType<typeof settledEventsFor>>;
  /** PaymentSettled events per payment (bytes32 id, lowercase). */
  perPayment: Map<string, number>;
  settledTwice: number;
  lost: number;
}

/**
 * Waits (up to timeoutMs) until every payment has a PaymentSettled event, then counts them. Never
 * throws on a shortfall, so the caller can report its figures before asserting.
 */
export async function awaitSettlements(w: World, payments: readonly CapturedPayment[], timeoutMs: number): Promise<SettlementCount> {
  const ids = payments.map((p) => p.paymentId);
  const deadline = Date.now() + timeoutMs;
  let events = await settledEventsFor(w, ids);
  while (new Set(events.map((e) => String(e.args.paymentId))).size < payments.length && Date.now() < deadline) {
    await sleep(2_000);
    events = await settledEventsFor(w, ids);
  }
  const perPayment = new Map<string, number>();
  for (const e of events) {
    const key = String(e.args.paymentId).toLowerCase();
    perPayment.set(key, (perPayment.get(key) ?? 0) + 1);
  }
  return { events, perPayment, settledTwice: [...perPayment.values()].filter((n) => n > 1).length, lost: payments.length - perPayment.size };
}
