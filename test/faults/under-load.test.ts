import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { planArrivals, runOpenLoop, type CaptureRecord, type OpenLoopResult } from '../../bench/open-loop.js';
import { mapPool } from '../../bench/stats.js';
import { prepareVouchers, type PreparedVoucher } from '../../bench/vouchers.js';
import { freePort } from '../../src/stack/processes.js';
import { idempotencyId } from '../../src/store/idempotency.js';
import { assertLedgerAgrees, settledEventsFor, type CapturedPayment } from '../helpers/ledger.js';
import { onboardBorrower } from '../helpers/onboarding.js';
import { newMerchant, UNTHROTTLED, type TestMerchant, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { creditPool } from './credit-pool.js';
import { FAULT_KINDS, FAULT_LABELS, inject, SecondApi, type FaultKind, type FaultTargets } from './load-faults.js';

/**
 * Faults under load: captures flow through two API processes, open loop, while each part of the
 * stack dies in turn at a random moment. `npm test` runs each fault once at a light rate;
 * FAULTS_UNDER_LOAD=long runs each 5 times at half the measured peak (FAULTS_LOAD_RATE overrides
 * the rate). FAULTS_OUT=<file> writes the figures as JSON.
 */
const LONG = process.env.FAULTS_UNDER_LOAD === 'long';
const ROUNDS = LONG ? 5 : 1;
const RATE = Number(process.env.FAULTS_LOAD_RATE ?? (LONG ? 12 : 6));
const RPC_OUTAGE_MS = LONG ? 30_000 : 10_000;
/** Generous time each fault takes, to size the load window around them. */
const SLOT_MS: Record<FaultKind, number> = { worker: 14_000, api: 12_000, store: 14_000, temporal: 18_000, rpc: RPC_OUTAGE_MS + 8_000, revert: 12_000 };

interface FaultRun {
  kind: FaultKind;
  startEpochMs: number;
  endEpochMs: number;
}

interface Sent {
  record: CaptureRecord;
  voucher: PreparedVoucher;
  baseUrl: string;
  startEpochMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (lo: number, hi: number) => lo + Math.random() * (hi - lo);
const median = (xs: number[]) => (xs.length === 0 ? Number.NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

/** The answer a merchant finally gets by retrying the same capture (same key, same body) while it answers 503 or nothing. */
async function retryUntilDecided(baseUrl: string, v: PreparedVoucher): Promise<{ status: number; paymentId?: string; code?: string }> {
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

/** What a refused capture left in the store: its key still bound, its spend intent consumed. */
async function leftBehind(w: World, v: PreparedVoucher): Promise<string[]> {
  const [key, fate] = await Promise.all([
    w.store.c.idempotency.findOne({ _id: idempotencyId(v.merchantId, v.idempotencyKey) }),
    w.store.c.spendIntentFates.findOne({ _id: v.spendIntentId }),
  ]);
  return [...(key ? ['idempotency key'] : []), ...(fate?.fate === 'CONSUMED' ? ['spend intent consumed'] : [])];
}

describe(`fault: every part of the stack killed while captures flow (${LONG ? '5 times each, half the peak rate' : 'once each, light load'})`, function () {
  this.timeout(LONG ? 3_600_000 : 900_000);
  const env = useIsolatedStack({
    // Vouchers are all signed before the load starts, and the long run outlasts the default 10-minute intent lifetime.
    env: { CONFIRMATIONS: '1', BATCH_MAX_WAIT_MS: '500', BATCH_MAX_ATTEMPTS: '5', CAPTURE_SWEEP_AFTER_SECONDS: '5', SPEND_INTENT_TTL_SECONDS: '1800' },
    rpcProxy: true,
  });
  let secondApi: SecondApi;

  before(async function () {
    this.timeout(120_000);
    const { stack, chain } = env();
    await chain.intervalMining(1);
    secondApi = new SecondApi(stack, await freePort());
    await secondApi.start();
  });

  after(async function () {
    await secondApi?.stop();
  });

  it('every 200 settles exactly once, every refusal leaves nothing the merchant cannot see, and the stack recovers by itself', async function () {
    const { stack, world: w, chain, rpcProxy } = env();
    const merchants: TestMerchant[] = await mapPool(Array.from({ length: 6 }), 3, (_, i) => newMerchant(w, `Load-fault merchant ${i + 1}`, { rateLimits: UNTHROTTLED }));
    const borrowers = await mapPool(Array.from({ length: 6 }), 3, () => onboardBorrower(w, { perPaymentLimit: '1000000', dailyLimit: '1000000000000' }));
    const targets: FaultTargets = { stack, w, chain, rpcProxy: rpcProxy!, pool: await creditPool(w, chain), secondApi, rpcOutageMs: RPC_OUTAGE_MS };

    const plan: FaultKind[] = Array.from({ length: ROUNDS }, () => [...FAULT_KINDS]).flat();
    const windowSeconds = Math.ceil((plan.reduce((s, k) => s + SLOT_MS[k] + 5_000, 0) + 10_000) / 1000);
    const apis = [w.baseUrl, secondApi.baseUrl];
    const arrivals = apis.map(() => planArrivals(RATE / apis.length, windowSeconds));
    const source = { w, merchants, borrowers, amount: '1000', mcpShare: 0, budgetSeconds: 5 };
    const vouchers: PreparedVoucher[][] = [];
    for (const a of arrivals) vouchers.push((await prepareVouchers(source, a.length)).vouchers);

    const faults: FaultRun[] = [];
    const injector = (async () => {
      for (const kind of plan) {
        await sleep(between(2_000, 5_000));
        const startEpochMs = Date.now();
        await inject(kind, targets);
        faults.push({ kind, startEpochMs, endEpochMs: Date.now() });
      }
    })();
    const loads: OpenLoopResult[] = await Promise.all(
      apis.map((baseUrl, i) => runOpenLoop({ baseUrl, rate: RATE / apis.length, seconds: windowSeconds, vouchers: vouchers[i]!, arrivals: arrivals[i]!, drainSeconds: 180 })),
    );
    await injector;
    const windowEnd = Math.min(...loads.map((l) => l.startEpochMs + l.windowMs));
    assert.ok(faults.every((f) => f.endEpochMs <= windowEnd), 'every fault happened while the load flowed (widen SLOT_MS otherwise)');

    const sent: Sent[] = loads.flatMap((l, i) => l.records.map((record, j) => ({ record, voucher: vouchers[i]![j]!, baseUrl: apis[i]!, startEpochMs: l.startEpochMs })));
    const firstAnswers = { accepted: 0, shed503: 0, rateLimited429: 0, otherRefusals: 0, noAnswer: 0, notSent: 0 };
    for (const s of sent) {
      const o = s.record.outcome;
      if (o === 'accepted') firstAnswers.accepted++;
      else if (o === 'shed_unavailable') firstAnswers.shed503++;
      else if (o === 'shed_rate_limited') firstAnswers.rateLimited429++;
      else if (o === 'not_sent') firstAnswers.notSent++;
      else if (o === 'unanswered' || s.record.code?.startsWith('network')) firstAnswers.noAnswer++;
      else firstAnswers.otherRefusals++;
    }
    assert.equal(firstAnswers.otherRefusals, 0, `no capture of a valid voucher is refused for good: ${JSON.stringify(sent.filter((s) => s.record.outcome === 'error' && !s.record.code?.startsWith('network')).map((s) => s.record).slice(0, 3))}`);

    // A refused capture must leave nothing, or leave exactly what a retry with its key then shows the merchant.
    const refusals = sent.filter((s) => s.record.outcome === 'shed_unavailable' || s.record.outcome === 'shed_rate_limited');
    const unknown = sent.filter((s) => s.record.outcome === 'unanswered' || s.record.outcome === 'error');
    const refusedClean = (await mapPool(refusals, 8, async (s) => (await leftBehind(w, s.voucher)).length === 0)).filter(Boolean).length;
    const retried = await mapPool([...refusals, ...unknown], 8, async (s) => ({ s, left: await leftBehind(w, s.voucher), answer: await retryUntilDecided(apis[0]!, s.voucher) }));
    for (const r of retried) {
      assert.equal(r.answer.status, 200, `a retry of the same capture is accepted: ${JSON.stringify(r.answer)}`);
      if (r.left.length > 0) assert.ok(r.answer.paymentId, 'what a refused capture left behind is the payment its retry names');
    }

    const merchantById = new Map(merchants.map((m) => [m.merchantId, m]));
    const payment = (v: PreparedVoucher, paymentId: string): CapturedPayment => ({ paymentId, amount: BigInt(v.amount), merchant: merchantById.get(v.merchantId)!, borrowerId: v.borrowerId });
    const accepted = [
      ...sent.filter((s) => s.record.outcome === 'accepted').map((s) => payment(s.voucher, s.record.paymentId!)),
      ...retried.map((r) => payment(r.s.voucher, r.answer.paymentId!)),
    ];
    assert.equal(new Set(accepted.map((p) => p.paymentId)).size, accepted.length, 'one payment per capture');

    // Count before asserting, so a failure still reports the figures.
    const settleDeadline = Date.now() + 300_000;
    let events = await settledEventsFor(w, accepted.map((p) => p.paymentId));
    while (new Set(events.map((e) => String(e.args.paymentId))).size < accepted.length && Date.now() < settleDeadline) {
      await sleep(2_000);
      events = await settledEventsFor(w, accepted.map((p) => p.paymentId));
    }
    const perPayment = new Map<string, number>();
    for (const e of events) perPayment.set(String(e.args.paymentId).toLowerCase(), (perPayment.get(String(e.args.paymentId).toLowerCase()) ?? 0) + 1);
    const settledTwice = [...perPayment.values()].filter((n) => n > 1).length;
    const lost = accepted.length - perPayment.size;

    const recovery = faults.map((f) => {
      const after = sent.filter((s) => s.record.sentMs !== undefined && s.startEpochMs + s.record.sentMs >= f.endEpochMs);
      const captureAt = after.filter((s) => s.record.outcome === 'accepted').map((s) => s.startEpochMs + (s.record.answeredMs as number));
      const confirmAt = sent.filter((s) => s.record.terminalSeenMs !== undefined && s.startEpochMs + s.record.terminalSeenMs >= f.endEpochMs).map((s) => s.startEpochMs + (s.record.terminalSeenMs as number));
      // Caught up: every payment accepted before the fault ended and still open then is CONFIRMED.
      const open = sent.filter((s) => s.record.outcome === 'accepted' && s.startEpochMs + (s.record.answeredMs as number) < f.endEpochMs);
      const openAtEnd = open.filter((s) => s.record.terminalSeenMs === undefined || s.startEpochMs + s.record.terminalSeenMs >= f.endEpochMs);
      const caughtUpAt = Math.max(f.endEpochMs, ...openAtEnd.map((s) => (s.record.terminalSeenMs === undefined ? Number.POSITIVE_INFINITY : s.startEpochMs + s.record.terminalSeenMs)));
      return { kind: f.kind, downMs: f.endEpochMs - f.startEpochMs, captureMs: Math.min(...captureAt) - f.endEpochMs, settleMs: Math.min(...confirmAt) - f.endEpochMs, catchUpMs: caughtUpAt - f.endEpochMs };
    });
    const byKind = FAULT_KINDS.map((kind) => {
      const mine = recovery.filter((r) => r.kind === kind);
      return {
        fault: FAULT_LABELS[kind],
        injected: mine.length,
        faultSecondsMedian: median(mine.map((r) => r.downMs)) / 1000,
        captureRecoverySecondsMax: Math.max(...mine.map((r) => r.captureMs)) / 1000,
        settlementRecoverySecondsMax: Math.max(...mine.map((r) => r.settleMs)) / 1000,
        catchUpSecondsMax: Math.max(...mine.map((r) => r.catchUpMs)) / 1000,
      };
    });
    const figures = {
      rate: RATE,
      windowSeconds,
      apis: apis.length,
      offered: sent.length,
      firstAnswers,
      refusedLeavingNothing: refusedClean,
      refusedResumedByRetry: refusals.length - refusedClean,
      unknownResolvedByRetry: unknown.length,
      accepted: accepted.length,
      lost,
      settledTwice,
      faults: byKind,
    };
    process.stdout.write(`\nfaults under load: ${JSON.stringify(figures, null, 2)}\n`);
    if (process.env.FAULTS_OUT) writeFileSync(process.env.FAULTS_OUT, JSON.stringify(figures, null, 2));

    assert.equal(settledTwice, 0, 'settled twice');
    assert.equal(lost, 0, 'lost');
    assert.ok(recovery.every((r) => Number.isFinite(r.captureMs) && Number.isFinite(r.settleMs)), `captures and settlement resumed after every fault: ${JSON.stringify(recovery)}`);
    await assertLedgerAgrees(w, accepted, { timeoutMs: 300_000 });
  });
});
