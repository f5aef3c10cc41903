import assert from 'node:assert/strict';
import { capturePayments, newParties, type Parties } from '../helpers/captures.js';
import { metricSum, scrapeApiMetrics } from '../helpers/metrics.js';
import { anvilControl } from '../support/anvil-control.js';
import { call, pollUntil, world, type ApiResponse, type World } from '../helpers/world.js';

const path = (paymentId: string) => `/facilitator/payments/${paymentId}`;

/** The API's store commands so far, by `command collection`. */
async function storeCommands(w: World): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await scrapeApiMetrics(w)).split('\n')) {
    const hit = /^x402_store_commands_total\{command="([^"]+)",collection="([^"]+)"[^}]*\} (\S+)$/.exec(line);
    if (hit) out.set(`${hit[1]} ${hit[2]}`, Number(hit[3]));
  }
  return out;
}

const grown = (before: Map<string, number>, after: Map<string, number>, key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);

describe('merchant: waiting for a payment without polling (Prefer: wait)', function () {
  this.timeout(180_000);
  let w: World;
  let p: Parties;

  before(async () => {
    w = await world();
    p = await newParties(w, 'Long poll merchant');
  });

  const longPoll = async (paymentId: string, wait: string, token = p.merchant.apiKey, signal?: AbortSignal) => {
    const started = Date.now();
    const res: ApiResponse = await call(w, 'GET', path(paymentId), { token, headers: { prefer: `wait=${wait}` }, ...(signal ? { signal } : {}) });
    return { res, ms: Date.now() - started };
  };

  it('a long poll sent right after capture answers CONFIRMED in one request, whatever steps the payment takes meanwhile', async function () {
    const payments = await capturePayments(w, p, [1000n, 2000n, 3000n]);
    const answers = await Promise.all(payments.map(({ paymentId }) => longPoll(paymentId, '30')));
    for (const { res, ms } of answers) {
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.equal(res.json.status, 'CONFIRMED', `one request, held through QUEUED and SUBMITTED: ${JSON.stringify(res.json)}`);
      assert.match(res.json.transaction, /^0x[0-9a-f]{64}$/);
      assert.equal(res.headers.get('preference-applied'), 'wait=30');
      assert.ok(ms < 30_000, `answered ${ms} ms after asking, once CONFIRMED`);
    }
    console.log(`      capture -> CONFIRMED in one long poll: ${Math.min(...answers.map((a) => a.ms))}-${Math.max(...answers.map((a) => a.ms))} ms`);
  });

  it('a long poll whose wait ends first answers the status then; held polls cost the store the same however many wait', async function () {
    const chain = anvilControl(w.env.RPC_URL as string);
    await chain.automine(false); // batches stay SUBMITTED until the test mines
    try {
      const payments = await capturePayments(w, p, Array.from({ length: 8 }, () => 1000n));
      const first = payments[0]!.paymentId;

      // (e) A plain poll of a payment still moving says when to ask again: the batch window (1 s on the test stack).
      const plain = await call(w, 'GET', path(first), { token: p.merchant.apiKey });
      assert.equal(plain.status, 200);
      assert.ok(['QUEUED', 'SUBMITTED'].includes(plain.json.status), JSON.stringify(plain.json));
      assert.equal(plain.headers.get('retry-after'), '1');
      assert.equal(plain.headers.get('preference-applied'), null);

      for (const { paymentId } of payments) await pollUntil(w, p.merchant, paymentId, 'SUBMITTED', 30_000);
      // The wait ends before the chain mines: the answer is the status then, held, with nothing to wait for.
      const short = await longPoll(first, '1');
      assert.equal(short.res.json.status, 'SUBMITTED', JSON.stringify(short.res.json));
      assert.equal(short.res.headers.get('preference-applied'), 'wait=1');
      assert.equal(short.res.headers.get('retry-after'), null, 'a held answer: ask again at once');
      assert.ok(short.ms >= 900, `held for its wait: ${short.ms} ms`);

      // SUBMITTED -> CONFIRMED: all held while the chain does not mine, answered once it does.
      const before = await storeCommands(w);
      const started = Date.now();
      const held = payments.map(({ paymentId }) => longPoll(paymentId, '20'));
      await new Promise((r) => setTimeout(r, 3_000));
      const during = await storeCommands(w);
      const heldFor = Date.now() - started;
      const metrics = await scrapeApiMetrics(w);
      assert.equal(metricSum(metrics, 'x402_payment_long_polls'), payments.length, 'every poll is held');
      await chain.mine(1);
      await chain.automine(true);
      const confirmed = await Promise.all(held);
      for (const { res, ms } of confirmed) {
        assert.equal(res.status, 200);
        assert.equal(res.json.status, 'CONFIRMED', JSON.stringify(res.json));
        assert.equal(res.headers.get('preference-applied'), 'wait=20');
        assert.ok(ms >= 2_900 && ms < 12_000, `answered ${ms} ms after asking (the chain mined at 3 s)`);
      }
      const board = grown(before, during, 'find settlement_shards');
      const payReads = grown(before, during, 'find payments');
      const batchReads = grown(before, during, 'find settlement_batches');
      console.log(
        `      ${payments.length} polls held ${heldFor} ms: store reads board ${board}, payments ${payReads}, batches ${batchReads}; answered ${Math.min(...confirmed.map((c) => c.ms)) - heldFor}-${Math.max(...confirmed.map((c) => c.ms)) - heldFor} ms after the mine call`,
      );
      // One board read per 250 ms for the whole process (capture admission shares it), never one per waiter and tick.
      assert.ok(board <= Math.ceil(heldFor / 250) + 4, `board reads ${board} in ${heldFor} ms`);
      assert.ok(payReads <= 2, `payment reads ${payReads} while nothing moved`);
      assert.equal(metricSum(await scrapeApiMetrics(w), 'x402_payment_long_polls'), 0);
    } finally {
      await chain.automine(true);
    }
  });

  it('a long poll on a final payment answers at once; a wait above 30 s is clamped to 30', async () => {
    const [payment] = await capturePayments(w, p, [1200n]);
    const id = payment!.paymentId;
    await pollUntil(w, p.merchant, id, 'CONFIRMED');
    const { res, ms } = await longPoll(id, '20');
    assert.equal(res.status, 200);
    assert.equal(res.json.status, 'CONFIRMED');
    assert.equal(res.headers.get('preference-applied'), 'wait=20');
    assert.equal(res.headers.get('retry-after'), null);
    assert.ok(ms < 2_000, `${ms} ms`);

    const clamped = await longPoll(id, '999');
    assert.equal(clamped.res.status, 200);
    assert.equal(clamped.res.headers.get('preference-applied'), 'wait=30');
    assert.ok(clamped.ms < 2_000, `${clamped.ms} ms`);

    const plain = await call(w, 'GET', path(id), { token: p.merchant.apiKey });
    assert.equal(plain.headers.get('retry-after'), null, 'a final answer has nothing to wait for');
  });

  it("a long poll on another merchant's payment is refused at once as the plain poll is (404), and a malformed wait is a plain poll", async () => {
    const [payment] = await capturePayments(w, p, [1300n]);
    const other = await newParties(w, 'Long poll other merchant');
    const plain = await call(w, 'GET', path(payment!.paymentId), { token: other.merchant.apiKey });
    const { res, ms } = await longPoll(payment!.paymentId, '20', other.merchant.apiKey);
    assert.equal(plain.status, 404);
    assert.equal(res.status, 404);
    assert.equal(res.json.error.code, 'NOT_FOUND');
    assert.deepEqual({ ...res.json.error, requestId: '' }, { ...plain.json.error, requestId: '' });
    assert.equal(res.headers.get('preference-applied'), null);
    assert.ok(ms < 2_000, `${ms} ms`);
    const unauthenticated = await call(w, 'GET', path(payment!.paymentId), { headers: { prefer: 'wait=20' } });
    assert.equal(unauthenticated.status, 401);

    const malformed = await longPoll(payment!.paymentId, 'soon');
    assert.equal(malformed.res.status, 200);
    assert.equal(malformed.res.headers.get('preference-applied'), null);
    assert.ok(malformed.ms < 2_000, `${malformed.ms} ms`);
    await pollUntil(w, p.merchant, payment!.paymentId, 'CONFIRMED');
  });

  it('a client that goes away releases its waiter', async function () {
    const chain = anvilControl(w.env.RPC_URL as string);
    await chain.automine(false);
    try {
      const [payment] = await capturePayments(w, p, [1400n]);
      await pollUntil(w, p.merchant, payment!.paymentId, 'SUBMITTED', 30_000); // held from here on: the chain does not mine
      const ctl = new AbortController();
      const gone = longPoll(payment!.paymentId, '20', p.merchant.apiKey, ctl.signal).catch((err: unknown) => err);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(metricSum(await scrapeApiMetrics(w), 'x402_payment_long_polls'), 1);
      ctl.abort();
      assert.ok((await gone) instanceof Error);
      const deadline = Date.now() + 2_000;
      while (metricSum(await scrapeApiMetrics(w), 'x402_payment_long_polls') !== 0) {
        assert.ok(Date.now() < deadline, 'the waiter is released');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await chain.mine(1);
      await chain.automine(true);
    }
  });
});
