import assert from 'node:assert/strict';
import type { PaymentStatus, Receipt } from '../../src/domain/payment.js';
import { PaymentStatusWaiters, type WaitSource } from '../../src/payments/status-waiters.js';
import { retryAfterSeconds } from '../../src/payments/poll-advice.js';

const receipt = (paymentId: string, status: PaymentStatus): Receipt => ({
  paymentId,
  status,
  merchantId: '11111111-1111-4111-8111-111111111111',
  payer: '22222222-2222-4222-8222-222222222222',
  amount: '1000',
  asset: '0x0000000000000000000000000000000000000001',
  network: 'eip155:84532',
  orderRef: 'order-1',
  capturedAt: '2026-01-01T00:00:00.000Z',
});

/** A settlement view the test moves by hand; counts refreshes and reads. */
function fakeWorld() {
  const status = new Map<string, PaymentStatus>();
  const signals = new Map<string, string>();
  let refreshes = 0;
  let reads = 0;
  const source: WaitSource = {
    refresh: async () => {
      refreshes++;
    },
    signal: (id) => signals.get(id) ?? '',
  };
  return {
    source,
    set(id: string, s: PaymentStatus, signal: string = s) {
      status.set(id, s);
      signals.set(id, signal);
    },
    current: (id: string) => async () => {
      reads++;
      return receipt(id, status.get(id) ?? 'QUEUED');
    },
    refreshes: () => refreshes,
    reads: () => reads,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('status long-poll waiters', () => {
  const opts = (maxWaiters = 10) => ({ maxWaiters, tickMs: 10, recheckMs: 10_000, nowMs: Date.now });

  it("answers with the new receipt as soon as the payment's status moves, and reads a payment only when its signal moves", async () => {
    const f = fakeWorld();
    f.set('a', 'QUEUED');
    f.set('b', 'QUEUED');
    const waiters = new PaymentStatusWaiters(f.source, opts());
    const a = waiters.wait({ paymentId: 'a', from: 'QUEUED', waitMs: 5_000, current: f.current('a') })!;
    const b = waiters.wait({ paymentId: 'b', from: 'QUEUED', waitMs: 5_000, current: f.current('b') })!;
    assert.equal(waiters.size, 2);
    await sleep(60);
    const readsWhileStill = f.reads();
    assert.equal(readsWhileStill, 2, 'each waiter is read once at its first tick, then not while its signal stays');
    assert.ok(f.refreshes() >= 3, `one shared refresh per tick: ${f.refreshes()}`);
    const started = Date.now();
    f.set('a', 'SUBMITTED');
    const answer = await a;
    assert.equal(answer?.status, 'SUBMITTED');
    assert.ok(Date.now() - started < 200);
    assert.equal(waiters.size, 1);
    f.set('b', 'QUEUED', 'claimed-then-requeued'); // the signal moves, the status does not: keeps waiting
    await sleep(40);
    assert.equal(waiters.size, 1);
    f.set('b', 'CONFIRMED');
    assert.equal((await b)?.status, 'CONFIRMED');
    assert.equal(waiters.size, 0);
  });

  it('ends at its timeout with undefined, and stops ticking once nobody waits', async () => {
    const f = fakeWorld();
    f.set('a', 'QUEUED');
    const waiters = new PaymentStatusWaiters(f.source, opts());
    const started = Date.now();
    assert.equal(await waiters.wait({ paymentId: 'a', from: 'QUEUED', waitMs: 80, current: f.current('a') }), undefined);
    assert.ok(Date.now() - started >= 75);
    await sleep(30);
    const after = f.refreshes();
    await sleep(50);
    assert.equal(f.refreshes(), after, 'no refresh without waiters');
  });

  it('holds at most maxWaiters; one more is refused at once (null), and a released slot is free again', async () => {
    const f = fakeWorld();
    const waiters = new PaymentStatusWaiters(f.source, opts(2));
    const ctl = new AbortController();
    const one = waiters.wait({ paymentId: 'a', from: 'QUEUED', waitMs: 5_000, current: f.current('a'), abort: ctl.signal });
    const two = waiters.wait({ paymentId: 'b', from: 'QUEUED', waitMs: 5_000, current: f.current('b') });
    assert.ok(one && two);
    assert.equal(waiters.wait({ paymentId: 'c', from: 'QUEUED', waitMs: 5_000, current: f.current('c') }), null);
    ctl.abort(); // the client went away
    assert.equal(await one, undefined);
    assert.equal(waiters.size, 1);
    const three = waiters.wait({ paymentId: 'c', from: 'QUEUED', waitMs: 5_000, current: f.current('c') });
    assert.ok(three);
    waiters.releaseAll();
    assert.deepEqual(await Promise.all([two, three]), [undefined, undefined]);
    assert.equal(waiters.size, 0);
    assert.equal(new PaymentStatusWaiters(f.source, opts(0)).wait({ paymentId: 'a', from: 'QUEUED', waitMs: 10, current: f.current('a') }), null);
  });

  it('rereads a payment whose signal never moves every recheckMs, and a failing refresh or read never throws', async () => {
    const f = fakeWorld();
    f.set('a', 'QUEUED', 'same');
    let failRefresh = true;
    const errors: unknown[] = [];
    const source: WaitSource = {
      refresh: async () => {
        if (failRefresh) throw new Error('store away');
      },
      signal: () => 'same',
    };
    const waiters = new PaymentStatusWaiters(source, { maxWaiters: 5, tickMs: 10, recheckMs: 50, nowMs: Date.now, onError: (e) => errors.push(e) });
    const a = waiters.wait({ paymentId: 'a', from: 'QUEUED', waitMs: 5_000, current: f.current('a') })!;
    await sleep(40);
    assert.ok(errors.length > 0);
    failRefresh = false;
    f.set('a', 'CONFIRMED', 'same');
    assert.equal((await a)?.status, 'CONFIRMED');
    const b = waiters.wait({
      paymentId: 'b',
      from: 'QUEUED',
      waitMs: 5_000,
      current: async () => {
        throw new Error('read failed');
      },
    })!;
    assert.equal(await b, undefined, 'a failed read ends the wait: the route answers (or reports) it itself');
  });

  it('Retry-After: a second while QUEUED under group commit, the batch window under a minimum batch, a second while SUBMITTED, none once final', () => {
    assert.equal(retryAfterSeconds('QUEUED', 5000), 1, 'group commit (BATCH_MIN_PAYMENTS 1): the batch closes at once');
    assert.equal(retryAfterSeconds('QUEUED', 5000, 100), 5);
    assert.equal(retryAfterSeconds('QUEUED', 1000, 100), 1);
    assert.equal(retryAfterSeconds('QUEUED', 1200, 100), 2);
    assert.equal(retryAfterSeconds('QUEUED', 10, 100), 1);
    assert.equal(retryAfterSeconds('SUBMITTED', 5000), 1);
    for (const s of ['CONFIRMED', 'FAILED', 'VOIDED'] as const) assert.equal(retryAfterSeconds(s, 5000), undefined);
  });
});
