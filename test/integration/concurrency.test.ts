import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { RatePolicy } from '../../src/domain/rate-limit.js';
import { idempotencyId } from '../../src/store/idempotency.js';
import { findPaymentWithOutcome } from '../../src/store/payment-outcomes.js';
import { startExtraApi, type ExtraApi } from '../helpers/extra-api.js';
import { paymentWorkflowsOf, settledEvents } from '../helpers/settlement-evidence.js';
import { call, capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, world, type ApiResponse, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';
import { getStack } from '../support/stack.js';

/** Waits until Temporal's visibility lists the merchant's payment workflows (it trails the start). */
async function listedPaymentWorkflows(w: World, merchantId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let listed = await paymentWorkflowsOf(w, merchantId);
  while (listed.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    listed = await paymentWorkflowsOf(w, merchantId);
  }
  return listed;
}

/** One payment, one workflow, CONFIRMED, one PaymentSettled: what every test here ends on. */
async function assertSettledOnce(w: World, m: TestMerchant, voucherId: string, paymentId: string) {
  const docs = await w.store.c.payments.find({ voucherId }).toArray();
  assert.deepEqual(docs.map((d) => d._id), [paymentId], 'exactly one payment document for the voucher');
  const confirmed = await pollUntil(w, m, paymentId, 'CONFIRMED');
  const workflows = await listedPaymentWorkflows(w, m.merchantId);
  assert.deepEqual(workflows.map((wf) => wf.workflowId), [paymentId], 'exactly one payment workflow for the merchant');
  // The workflow books the credit after CONFIRMED, then completes.
  assert.equal(await w.temporal.workflow.getHandle(paymentId).result().then((s: { status: string }) => s.status), 'CONFIRMED');
  assert.equal((await w.temporal.workflow.getHandle(paymentId).describe()).status.name, 'COMPLETED');
  const byPayment = await settledEvents(w, { paymentId });
  assert.equal(byPayment.length, 1, 'exactly one PaymentSettled for the payment');
  assert.equal(byPayment[0]!.transactionHash, confirmed.transaction);
  assert.equal((await settledEvents(w, { merchantId: m.merchantId })).length, 1, 'the merchant was paid once');
  // The store says CONFIRMED too (the document with its claimed batch's outcome): no late duplicate changed it.
  const stored = await findPaymentWithOutcome(w.store.c, paymentId);
  assert.equal(stored?.status, 'CONFIRMED');
  assert.equal(stored?.transaction, confirmed.transaction);
}

describe('concurrency: duplicate and competing captures', function () {
  let w: World;
  let b: TestBorrower;
  before(async function () {
    w = await world();
    b = await newBorrower(w);
  });

  it('100 simultaneous captures with one key and one body make one payment and 99 replays', async function () {
    const m = await newMerchant(w, 'Concurrent key', { rateLimits: UNTHROTTLED });
    const v = await newVoucher(w, m, b, '4200');
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 100 }, () => capture(w, m, v.captureBody, key)));

    const unexpected = answers.filter((a) => a.status !== 200);
    assert.deepEqual(unexpected.map((a) => `${a.status} ${JSON.stringify(a.json)}`), [], 'every duplicate answers 200');
    assert.equal(answers.filter((a) => a.json.replayed === false).length, 1, 'exactly one first capture');
    assert.equal(answers.filter((a) => a.json.replayed === true).length, 99, '99 replays');
    for (const a of answers) assert.equal(a.headers.get('idempotent-replayed') === 'true', a.json.replayed);
    const paymentIds = new Set(answers.map((a) => a.json.receipt.paymentId));
    assert.equal(paymentIds.size, 1, 'one paymentId in every answer');
    const [paymentId] = [...paymentIds] as [string];

    await assertSettledOnce(w, m, v.prepared.voucher.voucherId, paymentId);
  });

  it('one voucher under 20 keys at once is accepted once; the 19 refused keys stay free', async function () {
    const m = await newMerchant(w, 'Concurrent voucher', { rateLimits: UNTHROTTLED });
    const v = await newVoucher(w, m, b, '4300');
    const keys = Array.from({ length: 20 }, () => randomUUID());
    const answers = await Promise.all(keys.map((k) => capture(w, m, v.captureBody, k)));

    const accepted = answers.filter((a) => a.status === 200);
    assert.equal(accepted.length, 1, `accepted ${accepted.length}: ${answers.map((a) => a.status).join(',')}`);
    assert.equal(accepted[0]!.json.replayed, false);
    const refusedKeys = keys.filter((_, i) => answers[i]!.status !== 200);
    for (const a of answers.filter((x) => x.status !== 200)) {
      assert.equal(a.status, 422, JSON.stringify(a.json));
      assert.equal(a.json.error.code, 'PAYMENT_REJECTED');
      assert.equal(a.json.error.invalidReason, 'voucher_already_used');
    }
    const paymentId = accepted[0]!.json.receipt.paymentId as string;

    const claimed = await w.store.c.idempotency.find({ merchantId: m.merchantId }).toArray();
    assert.deepEqual(claimed.map((d) => d.paymentId), [paymentId], 'only the accepted key stays bound');
    const retries = await Promise.all(refusedKeys.slice(0, 5).map((k) => capture(w, m, v.captureBody, k)));
    for (const r of retries) {
      assert.equal(r.status, 422, `a refused key retried: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.invalidReason, 'voucher_already_used');
    }
    assert.equal(await w.store.c.idempotency.countDocuments({ _id: { $in: refusedKeys.map((k) => idempotencyId(m.merchantId, k)) } }), 0);

    await assertSettledOnce(w, m, v.prepared.voucher.voucherId, paymentId);
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Bucket {
  name: 'verify' | 'capture';
  policy: RatePolicy;
  /** A request that passes authentication and the limiter, then fails cheaply (400). */
  send(target: World, m: TestMerchant): Promise<ApiResponse>;
}

function assertRateHeaders(r: ApiResponse, policy: RatePolicy, what: string) {
  assert.equal(r.headers.get('ratelimit-limit'), String(policy.burst), `${what}: RateLimit-Limit`);
  assert.match(r.headers.get('ratelimit-remaining') ?? '', /^\d+$/, `${what}: RateLimit-Remaining`);
  assert.match(r.headers.get('ratelimit-reset') ?? '', /^\d+$/, `${what}: RateLimit-Reset`);
  assert.equal(r.headers.get('ratelimit-policy'), `${policy.perMinute};w=60;burst=${policy.burst}`, `${what}: RateLimit-Policy`);
}

function assertLimited(r: ApiResponse, what: string) {
  assert.equal(r.status, 429, what);
  assert.equal(r.json.error.code, 'RATE_LIMITED', what);
  assert.match(r.json.error.requestId, /^req_/, what);
  assert.equal(r.headers.get('ratelimit-remaining'), '0', what);
  assert.match(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/, `${what}: Retry-After`);
}

/** The most a token bucket may allow within `elapsedMs`: the burst plus what the rate refilled meanwhile. */
function ceiling(policy: RatePolicy, elapsedMs: number): number {
  return policy.burst + Math.ceil(elapsedMs / (60_000 / policy.perMinute));
}

describe('concurrency: rate limits shared by two API processes', function () {
  let w: World;
  let second: ExtraApi;
  let targets: [World, World];
  let buckets: Bucket[];

  before(async function () {
    w = await world();
    const config = (await getStack()).config;
    second = await startExtraApi('api-2');
    targets = [w, { ...w, baseUrl: second.baseUrl }];
    buckets = [
      {
        name: 'verify',
        policy: { perMinute: config.RATE_LIMIT_VERIFY_PER_MIN, burst: config.RATE_LIMIT_VERIFY_BURST },
        send: (t, m) => call(t, 'POST', '/facilitator/verify', { token: m.apiKey, body: {} }),
      },
      {
        name: 'capture',
        // No Idempotency-Key: refused with 400 after authentication and the limiter.
        policy: { perMinute: config.RATE_LIMIT_CAPTURE_PER_MIN, burst: config.RATE_LIMIT_CAPTURE_BURST },
        send: (t, m) => call(t, 'POST', '/facilitator/capture', { token: m.apiKey, body: {} }),
      },
    ];
  });

  after(async function () {
    await second?.stop();
  });

  it('allows the burst across both processes, then 429 with Retry-After, then allows again (verify and capture)', async function () {
    for (const bucket of buckets) {
      const m = await newMerchant(w, `Shared ${bucket.name} limit`);
      const answers: ApiResponse[] = [];
      const started = Date.now();
      let limited: { r: ApiResponse; at: number } | undefined;
      for (let i = 0; i < bucket.policy.burst * 3 && !limited; i++) {
        const r = await bucket.send(targets[i % 2]!, m);
        assertRateHeaders(r, bucket.policy, `${bucket.name} #${i}`);
        if (r.status === 429) limited = { r, at: i };
        else {
          assert.equal(r.status, 400, `${bucket.name} #${i}: ${JSON.stringify(r.json)}`);
          answers.push(r);
        }
      }
      const elapsed = Date.now() - started;
      assert.ok(limited, `${bucket.name}: no 429 in ${answers.length} requests`);
      assertLimited(limited.r, bucket.name);
      const allowed = answers.length;
      assert.ok(allowed >= bucket.policy.burst, `${bucket.name}: only ${allowed} allowed before the first 429 (burst ${bucket.policy.burst})`);
      assert.ok(allowed <= ceiling(bucket.policy, elapsed), `${bucket.name}: ${allowed} allowed in ${elapsed} ms`);
      // Both processes answered within the burst, so neither kept a limit of its own.
      assert.ok(allowed >= 2);

      await sleep(Number(limited.r.headers.get('retry-after')) * 1000);
      const other = targets[(limited.at + 1) % 2]!;
      const again = await bucket.send(other, m);
      assert.equal(again.status, 400, `${bucket.name} after Retry-After: ${JSON.stringify(again.json)}`);
      assertRateHeaders(again, bucket.policy, `${bucket.name} after Retry-After`);
    }
  });

  it('never lets simultaneous requests on both processes exceed the burst, nor refuses within it', async function () {
    for (const bucket of buckets) {
      const m = await newMerchant(w, `Simultaneous ${bucket.name} limit`);
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: bucket.policy.burst * 3 }, (_, i) => bucket.send(targets[i % 2]!, m)));
      const elapsed = Date.now() - started;
      for (const [i, r] of answers.entries()) {
        assertRateHeaders(r, bucket.policy, `${bucket.name} #${i}`);
        if (r.status === 429) assertLimited(r, `${bucket.name} #${i}`);
        else assert.equal(r.status, 400, JSON.stringify(r.json));
      }
      const allowed = answers.filter((r) => r.status !== 429).length;
      assert.ok(allowed >= bucket.policy.burst, `${bucket.name}: ${allowed} allowed of a burst of ${bucket.policy.burst}`);
      assert.ok(allowed <= ceiling(bucket.policy, elapsed), `${bucket.name}: ${allowed} allowed in ${elapsed} ms (burst ${bucket.policy.burst})`);
    }
  });
});
