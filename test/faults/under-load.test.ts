import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mapPool } from '../../bench/stats.js';
import type { PreparedVoucher } from '../../bench/vouchers.js';
import { freePort } from '../../tools/stack/processes.js';
import { idempotencyId } from '../../src/store/idempotency.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import type { World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { creditPool } from './credit-pool.js';
import { awaitSettlements, capturedPayment, firstAnswersOf, loadParties, planLoad, loggedRequestFailures, refusedForGood, retryUntilDecided, runLoad } from './load-captures.js';
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (lo: number, hi: number) => lo + Math.random() * (hi - lo);
const median = (xs: number[]) => (xs.length === 0 ? Number.NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

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
    const parties = await loadParties(w, 6, 'Load-fault merchant');
    const targets: FaultTargets = { stack, w, chain, rpcProxy: rpcProxy!, pool: await creditPool(w, chain), secondApi, rpcOutageMs: RPC_OUTAGE_MS };

    const plan: FaultKind[] = Array.from({ length: ROUNDS }, () => [...FAULT_KINDS]).flat();
    const windowSeconds = Math.ceil((plan.reduce((s, k) => s + SLOT_MS[k] + 5_000, 0) + 10_000) / 1000);
    const apis = [w.baseUrl, secondApi.baseUrl];
    const load = await planLoad(w, parties, apis, RATE, windowSeconds);

    const faults: FaultRun[] = [];
    const injector = (async () => {
      for (const kind of plan) {
        await sleep(between(2_000, 5_000));
        const startEpochMs = Date.now();
        await inject(kind, targets);
        faults.push({ kind, startEpochMs, endEpochMs: Date.now() });
      }
    })();
    const { loads, sent } = await runLoad(load, RATE, windowSeconds, 180);
    await injector;
    const windowEnd = Math.min(...loads.map((l) => l.startEpochMs + l.windowMs));
    assert.ok(faults.every((f) => f.endEpochMs <= windowEnd), 'every fault happened while the load flowed (widen SLOT_MS otherwise)');

    const firstAnswers = firstAnswersOf(sent);
    assert.equal(firstAnswers.otherRefusals, 0, `no capture of a valid voucher is refused for good: ${JSON.stringify(refusedForGood(sent).map((s) => s.record).slice(0, 3))}; faults so far ${JSON.stringify(faults.map((f) => ({ kind: f.kind, fromMs: f.startEpochMs - Math.min(...loads.map((l) => l.startEpochMs)), toMs: f.endEpochMs - Math.min(...loads.map((l) => l.startEpochMs)) })))}; logged ${loggedRequestFailures(stack.dataDir).join(' | ')}`);

    // A refused capture must leave nothing, or leave exactly what a retry with its key then shows the merchant.
    const refusals = sent.filter((s) => s.record.outcome === 'shed_unavailable' || s.record.outcome === 'shed_rate_limited');
    const unknown = sent.filter((s) => s.record.outcome === 'unanswered' || s.record.outcome === 'error');
    const refusedClean = (await mapPool(refusals, 8, async (s) => (await leftBehind(w, s.voucher)).length === 0)).filter(Boolean).length;
    const retried = await mapPool([...refusals, ...unknown], 8, async (s) => ({ s, left: await leftBehind(w, s.voucher), answer: await retryUntilDecided(apis[0]!, s.voucher) }));
    for (const r of retried) {
      assert.equal(r.answer.status, 200, `a retry of the same capture is accepted: ${JSON.stringify(r.answer)}`);
      if (r.left.length > 0) assert.ok(r.answer.paymentId, 'what a refused capture left behind is the payment its retry names');
    }

    const accepted = [
      ...sent.filter((s) => s.record.outcome === 'accepted').map((s) => capturedPayment(parties.merchants, s.voucher, s.record.paymentId!)),
      ...retried.map((r) => capturedPayment(parties.merchants, r.s.voucher, r.answer.paymentId!)),
    ];
    assert.equal(new Set(accepted.map((p) => p.paymentId)).size, accepted.length, 'one payment per capture');

    // Count before asserting, so a failure still reports the figures.
    const { settledTwice, lost } = await awaitSettlements(w, accepted, 300_000);

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
