import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../src/main/app-deps.js';
import { acceptCreditFacility } from '../../src/agents/facility.js';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { spendDayId, utcDay } from '../../src/domain/agent-policy.js';
import { closeHoldsOfBorrowers, convertHoldToDebt, findBorrower, holdCredit, releaseHold } from '../../src/store/borrowers.js';
import type { BorrowerDoc } from '../../src/store/documents.js';
import { bookRepayment } from '../../src/store/repayments.js';
import { ensureSigningRequest, markSigned } from '../../src/store/signing-requests.js';
import { agentDeps, onboardBorrower, paymentRequiredHeader, signStep } from '../helpers/onboarding.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { prepareInProcess, prepareOverMcp, type Prepared } from '../helpers/prepare-outcome.js';
import { highSTwin } from '../helpers/signature-twin.js';
import { pendingSigningRequest } from '../helpers/signing-request-doc.js';
import { newBorrower, newMerchant, world, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';

async function borrowerDoc(w: World, borrowerId: string): Promise<BorrowerDoc> {
  const b = await findBorrower(w.store.c, borrowerId);
  assert.ok(b, `borrower ${borrowerId} exists`);
  return b;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * `n` prepare_x402_payment calls at once, each for its own order, half in the API process over MCP
 * and half in this process, so the race spans two processes.
 */
async function prepareAtOnce(w: World, deps: AppDeps, m: TestMerchant, b: TestBorrower, amount: number, n: number) {
  const token = await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES });
  const header = paymentRequiredHeader(deps, m, String(amount));
  const outcomes = await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const orderRef = `race-${randomUUID().slice(0, 8)}`;
      return i % 2 === 0 ? prepareOverMcp(w, token, header, orderRef) : prepareInProcess(deps, b, header, orderRef);
    }),
  );
  return { held: outcomes.filter((o) => o.spendIntentId !== undefined).map((o) => o.spendIntentId as string), refused: outcomes.filter((o) => o.error) };
}

function assertRefusedWith(refused: Prepared[], code: string, reason?: string) {
  for (const r of refused) {
    assert.equal(r.error?.code, code, JSON.stringify(r.error));
    if (reason !== undefined) assert.equal(r.error?.reason, reason, JSON.stringify(r.error));
  }
}

describe('store races on the real store: credit holds, daily spend, signatures', function () {
  let w: World;
  let deps: AppDeps;
  let m: TestMerchant;

  before(async function () {
    w = await world();
    deps = await agentDeps(w);
    m = await newMerchant(w, 'Store races');
  });

  it('20 simultaneous prepare_x402_payment calls hold exactly what the credit line allows', async function () {
    const b = await newBorrower(w);
    const limit = (await borrowerDoc(w, b.borrowerId)).creditLimit;
    const amount = Math.floor(limit / 7) + 1; // six fit, a seventh does not

    const { held, refused } = await prepareAtOnce(w, deps, m, b, amount, 20);

    assert.equal(held.length, 6, `held ${held.length} of 20 (${JSON.stringify(refused)})`);
    assertRefusedWith(refused, 'INSUFFICIENT_CREDIT');
    const after = await borrowerDoc(w, b.borrowerId);
    const ids = [...held].sort();
    assert.deepEqual(Object.keys(after.holds).sort(), ids, 'one hold per prepared intent, none for a refused one');
    assert.ok(Object.values(after.holds).every((h) => h === amount));
    assert.equal(after.available, limit - sum(Object.values(after.holds)), 'available = limit - holds');
    const day = await w.store.c.agentSpendDays.findOne({ _id: spendDayId(b.agentKeyId, utcDay(Date.now())) });
    assert.equal(day?.spent, 6 * amount, 'refused calls gave their daily charge back');
    assert.deepEqual(Object.keys(day?.charges ?? {}).sort(), ids);
  });

  it("a batch end closing three borrowers' holds at once, twice, while new holds land on them books each hold once and loses no hold", async function () {
    const c = w.store.c;
    const borrowers = await Promise.all([newBorrower(w), newBorrower(w), newBorrower(w)]);
    const limit = (await borrowerDoc(w, borrowers[0]!.borrowerId)).creditLimit;
    const unit = Math.floor(limit / 40);
    const batch = new Map<string, string[]>();
    for (const b of borrowers) {
      const ids = Array.from({ length: 5 }, () => randomUUID());
      for (const id of ids) assert.equal(await holdCredit(c, b.borrowerId, id, unit), 'held');
      batch.set(b.borrowerId, ids);
    }
    const fresh = borrowers.map((b) => ({ b, ids: Array.from({ length: 10 }, () => randomUUID()) }));

    // The holds' writers (changeBorrower) overtake the batch's fenced writes: the losers are read and decided again.
    const [, , holds] = await Promise.all([
      closeHoldsOfBorrowers(c, batch, 'debt'),
      closeHoldsOfBorrowers(c, batch, 'debt'),
      Promise.all(fresh.flatMap(({ b, ids }) => ids.map((id) => holdCredit(c, b.borrowerId, id, unit)))),
    ]);

    assert.ok(holds.every((h) => h === 'held'), holds.join(','));
    for (const { b, ids } of fresh) {
      const after = await borrowerDoc(w, b.borrowerId);
      assert.equal(after.debt, 5 * unit, 'each closed hold booked once');
      assert.deepEqual(Object.keys(after.holds).sort(), [...ids].sort(), 'the batch holds closed, every new hold kept');
      assert.equal(after.available, limit - 15 * unit, 'available = limit - holds - debt');
    }
    await closeHoldsOfBorrowers(c, batch, 'available');
    assert.equal((await borrowerDoc(w, borrowers[0]!.borrowerId)).available, limit - 15 * unit, 'a retried batch end closes nothing again');
  });

  it("holds, releases, debt bookings and repayments at once keep the borrower's books balanced", async function () {
    const b = await newBorrower(w);
    const c = w.store.c;
    const limit = (await borrowerDoc(w, b.borrowerId)).creditLimit;
    const unit = Math.floor(limit / 40);
    const early = Array.from({ length: 12 }, () => randomUUID());
    for (const id of early) assert.equal(await holdCredit(c, b.borrowerId, id, unit), 'held');
    for (const id of early.slice(0, 2)) assert.equal(await convertHoldToDebt(c, b.borrowerId, id), true);
    const released = early.slice(2, 5);
    const converted = early.slice(5, 8);
    const repayments = [randomUUID(), randomUUID()];
    const fresh = Array.from({ length: 40 }, () => randomUUID());
    const free = Math.floor((await borrowerDoc(w, b.borrowerId)).available / unit);

    const [releases, conversions, bookings, holds] = await Promise.all([
      Promise.all([...released, released[0]!].map((id) => releaseHold(c, b.borrowerId, id))),
      Promise.all([...converted, converted[0]!].map((id) => convertHoldToDebt(c, b.borrowerId, id))),
      Promise.all([...repayments, repayments[0]!].map((id) => bookRepayment(c, b.borrowerId, id, unit))),
      Promise.all(fresh.map((id) => holdCredit(c, b.borrowerId, id, unit))),
    ]);

    assert.equal(releases.filter(Boolean).length, 3, 'each hold released once');
    assert.equal(conversions.filter(Boolean).length, 3, 'each hold booked as debt once');
    assert.equal(bookings.filter(Boolean).length, 2, 'each repayment booked once');
    assert.ok(holds.every((h) => h === 'held' || h === 'insufficient_credit'), holds.join(','));
    const newHolds = holds.filter((h) => h === 'held').length;
    assert.ok(newHolds >= free && newHolds <= free + 5, `${newHolds} new holds with ${free} free units and 5 coming back`);
    const after = await borrowerDoc(w, b.borrowerId);
    assert.equal(after.debt, (2 + 3 - 2) * unit, 'debt = converted - repaid');
    assert.equal(Object.keys(after.holds).length, 12 - 2 - 3 - 3 + newHolds, 'holds = early - closed + new');
    assert.equal(after.available, limit - sum(Object.values(after.holds)) - after.debt, 'available = limit - holds - debt');
    assert.ok(after.available >= 0);
  });

  it("simultaneous payments stop at the agent key's daily limit", async function () {
    const amount = 1_000_000;
    const b = await newBorrower(w, { perPaymentLimit: String(amount), dailyLimit: String(5 * amount) });
    const limit = (await borrowerDoc(w, b.borrowerId)).creditLimit;

    const { held, refused } = await prepareAtOnce(w, deps, m, b, amount, 20);

    assert.equal(held.length, 5, `held ${held.length} of 20 (${JSON.stringify(refused)})`);
    assertRefusedWith(refused, 'POLICY_DENIED', 'over_daily_limit');
    const ids = [...held].sort();
    const day = await w.store.c.agentSpendDays.findOne({ _id: spendDayId(b.agentKeyId, utcDay(Date.now())) });
    assert.equal(day?.spent, 5 * amount);
    assert.deepEqual(Object.keys(day?.charges ?? {}).sort(), ids);
    const after = await borrowerDoc(w, b.borrowerId);
    assert.deepEqual(Object.keys(after.holds).sort(), ids);
    assert.equal(after.available, limit - 5 * amount);
  });

  it('of 20 signatures recorded at once for one request, exactly one wins (three requests at once)', async function () {
    const now = new Date();
    const requests = await Promise.all(
      Array.from({ length: 3 }, () =>
        ensureSigningRequest(w.store.c, pendingSigningRequest({ now })),
      ),
    );
    const signatures = Array.from({ length: 20 }, (_, i) => `0x${i.toString(16).padStart(130, '0')}`);
    const wins = await Promise.all(requests.map((r) => Promise.all(signatures.map((s) => markSigned(w.store.c, r._id, s, new Date())))));
    for (const [i, r] of requests.entries()) {
      const won = wins[i]!;
      assert.equal(won.filter(Boolean).length, 1, `request ${i}: ${won.filter(Boolean).length} posts won`);
      const stored = await w.store.c.signingRequests.findOne({ _id: r._id });
      assert.equal(stored?.status, 'SIGNED');
      assert.equal(stored?.signature, signatures[won.indexOf(true)], "the stored signature is the winner's");
    }
  });

  it('a signature and its high-s twin posted at once to the signing page: the canonical one is recorded and applied once, the twin refused', async function () {
    const b = await onboardBorrower(w, { until: 'WALLET_VERIFIED' });
    const step = await acceptCreditFacility(deps, b.principal, { idempotency_key: randomUUID() });
    const low = await signStep(b.wallet, step);
    const signatures = [low, highSTwin(low)];
    const url = `${new URL(w.baseUrl).origin}/borrower/api/signing-requests/${step.signing_request_id}/signature`;
    const post = (signature: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signature }) }).then(async (r) => ({
        signature,
        status: r.status,
        json: (await r.json()) as { status?: string; error?: { reason?: string } },
      }));

    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => post(signatures[i % 2]!)));

    const stored = await w.store.c.signingRequests.findOne({ _id: step.signing_request_id });
    assert.equal(stored?.status, 'COMPLETED');
    assert.equal(stored?.signature, low.toLowerCase(), 'only the canonical low-s signature can be recorded');
    for (const a of answers) {
      if (a.signature === low) assert.deepEqual([a.status, a.json.status], [200, 'completed'], JSON.stringify(a));
      // The twin is refused as not canonical while the request is open, as closed once it is signed.
      else assert.ok([`400 SIGNATURE_INVALID`, `409 SIGNING_REQUEST_CLOSED`].includes(`${a.status} ${a.json.error?.reason}`), JSON.stringify(a));
    }
    const borrower = await borrowerDoc(w, b.borrowerId);
    assert.equal(borrower.stage, 'FACILITY_ACCEPTED');
    assert.equal(borrower.available, borrower.creditLimit, 'the credit line was booked once');
  });
});
