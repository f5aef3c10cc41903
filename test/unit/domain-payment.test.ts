import assert from 'node:assert/strict';
import {
  PaymentTransitionError,
  TERMINAL_STATUSES,
  initialPaymentState,
  isTerminal,
  nextPaymentState,
  type PaymentEvent,
  type PaymentState,
} from '../../src/domain/payment.js';

const submitted: PaymentEvent = { type: 'submitted', batchId: 'b1', transaction: '0xt1' };
const confirmed: PaymentEvent = { type: 'confirmed', batchId: 'b1', transaction: '0xt1', blockNumber: '12', confirmedAt: '2024-01-01T00:00:00.000Z' };

function run(...events: PaymentEvent[]): PaymentState {
  return events.reduce(nextPaymentState, initialPaymentState());
}

describe('domain/payment', () => {
  it('starts QUEUED with no attempts', () => {
    assert.deepEqual(initialPaymentState(), { status: 'QUEUED', attempts: 0 });
    assert.deepEqual([...TERMINAL_STATUSES].sort(), ['CONFIRMED', 'FAILED', 'VOIDED']);
    assert.equal(isTerminal('QUEUED'), false);
    assert.equal(isTerminal('FAILED'), true);
  });

  it('QUEUED -> SUBMITTED -> CONFIRMED', () => {
    const s1 = run(submitted);
    assert.deepEqual(s1, { status: 'SUBMITTED', attempts: 0, batchId: 'b1', transaction: '0xt1' });
    const s2 = nextPaymentState(s1, confirmed);
    assert.deepEqual(s2, {
      status: 'CONFIRMED',
      attempts: 0,
      batchId: 'b1',
      transaction: '0xt1',
      blockNumber: '12',
      confirmedAt: '2024-01-01T00:00:00.000Z',
    });
  });

  it('does not mutate the input state', () => {
    const s0 = initialPaymentState();
    nextPaymentState(s0, submitted);
    assert.deepEqual(s0, { status: 'QUEUED', attempts: 0 });
  });

  it('requeue clears the batch and counts the attempt', () => {
    const s = run(submitted, { type: 'requeued', reason: 'batch reverted' });
    assert.deepEqual(s, { status: 'QUEUED', attempts: 1, lastRequeueReason: 'batch reverted' });
    const again = run(submitted, { type: 'requeued', reason: 'r' }, { ...submitted, batchId: 'b2' }, { type: 'requeued', reason: 'dropped' });
    assert.equal(again.attempts, 2);
    const done = nextPaymentState(nextPaymentState(again, { ...submitted, batchId: 'b3' }), { ...confirmed, batchId: 'b3', transaction: '0xt3' });
    assert.equal(done.status, 'CONFIRMED');
    assert.equal(done.transaction, '0xt3');
  });

  it('fails from QUEUED or SUBMITTED with a reason', () => {
    assert.deepEqual(run({ type: 'failed', reason: 'retry budget spent' }), {
      status: 'FAILED',
      attempts: 0,
      failureReason: 'retry budget spent',
    });
    assert.equal(run(submitted, { type: 'failed', reason: 'x' }).status, 'FAILED');
  });

  it('repeats of the same event are idempotent', () => {
    const c = run(submitted, confirmed);
    assert.equal(nextPaymentState(c, confirmed), c);
    const s = run(submitted);
    assert.equal(nextPaymentState(s, submitted), s);
    const f = run({ type: 'failed', reason: 'x' });
    assert.equal(nextPaymentState(f, { type: 'failed', reason: 'x' }), f);
  });

  it('a rebroadcast of the same batch updates the transaction', () => {
    const s = run(submitted, { ...submitted, transaction: '0xt2' });
    assert.equal(s.status, 'SUBMITTED');
    assert.equal(s.transaction, '0xt2');
  });

  it('throws a typed error on illegal moves', () => {
    const illegal: [PaymentEvent[], PaymentEvent][] = [
      [[], confirmed],
      [[], { type: 'requeued', reason: 'x' }],
      [[submitted], { ...submitted, batchId: 'b2' }],
      [[submitted], { ...confirmed, batchId: 'b2' }],
      [[submitted, confirmed], submitted],
      [[submitted, confirmed], { ...confirmed, blockNumber: '13' }],
      [[submitted, confirmed], { type: 'requeued', reason: 'x' }],
      [[submitted, confirmed], { type: 'failed', reason: 'x' }],
      [[{ type: 'failed', reason: 'x' }], submitted],
      [[{ type: 'failed', reason: 'x' }], confirmed],
      [[{ type: 'failed', reason: 'x' }], { type: 'failed', reason: 'y' }],
      [[{ type: 'failed', reason: 'x' }], { type: 'requeued', reason: 'y' }],
    ];
    for (const [history, event] of illegal) {
      const state = run(...history);
      assert.throws(
        () => nextPaymentState(state, event),
        (e: unknown) => e instanceof PaymentTransitionError && e.from === state.status && e.event === event.type,
        `${state.status} on ${event.type}`,
      );
    }
  });
});
