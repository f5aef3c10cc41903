import { strict as assert } from 'node:assert';
import { planResend } from '../../src/chain/nonce-resend-plan.js';
import { refusedAsAlreadyHeld } from '../../src/chain/rebroadcast-refusal.js';
import { SentTransactions, type SentTransaction } from '../../src/chain/sent-transactions.js';

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const known = (...nonces: number[]) => new Set(nonces);

describe('chain: what the nonce manager hands back to a node that lost transactions', () => {
  it('nothing lost: the node holds every nonce up to ours, mined or pending', () => {
    assert.equal(planResend({ mined: 10, pending: 12 }, { next: 12, minedSeen: 10, known: known(...range(5, 12)) }), null);
    assert.equal(planResend({ mined: 12, pending: 12 }, { next: 12, minedSeen: 11, known: known(...range(5, 12)) }), null);
  });

  it('a node restarted on an older state (blocks and mempool lost): every known nonce from its pending one, same transactions', () => {
    const plan = planResend({ mined: 7, pending: 7 }, { next: 12, minedSeen: 10, known: known(...range(5, 12)) });
    assert.deepEqual(plan, { resend: [7, 8, 9, 10, 11], fill: [], next: 12 });
  });

  it('blocks dropped while the mempool kept later ones (pending still high): from the mined nonce', () => {
    const plan = planResend({ mined: 8, pending: 12 }, { next: 12, minedSeen: 10, known: known(...range(5, 12)) });
    assert.deepEqual(plan, { resend: [8, 9, 10, 11], fill: [], next: 12 });
  });

  it('the node forgot the lowest transaction we wait on: from that one', () => {
    const plan = planResend({ mined: 10, pending: 12 }, { next: 12, minedSeen: 10, known: known(...range(5, 12)), forgotten: 10 });
    assert.deepEqual(plan, { resend: [10, 11], fill: [], next: 12 });
  });

  it('never hands back a nonce below the mined one', () => {
    const plan = planResend({ mined: 9, pending: 9 }, { next: 12, minedSeen: 9, known: known(...range(5, 12)), forgotten: 6 });
    assert.deepEqual(plan?.resend, [9, 10, 11]);
  });

  it('a lost nonce this process never sent, below one it did (a restart in between): a hole to fill, never a second transaction for a known nonce', () => {
    const plan = planResend({ mined: 3, pending: 3 }, { next: 8, minedSeen: 6, known: known(5, 6, 7) });
    assert.deepEqual(plan, { resend: [5, 6, 7], fill: [3, 4], next: 8 });
  });

  it('the nonce the node would mine next is unknown while later ones are ours: a hole, even with the node pending past ours', () => {
    const plan = planResend({ mined: 4, pending: 8 }, { next: 8, minedSeen: 4, known: known(5, 6, 7) });
    assert.deepEqual(plan, { resend: [5, 6, 7], fill: [4], next: 8 });
  });

  it('unknown nonces above every known one, that the node lacks too: given back to new sends', () => {
    assert.deepEqual(planResend({ mined: 3, pending: 3 }, { next: 8, minedSeen: 3, known: known(1, 2, 3, 4) }), { resend: [3, 4], fill: [], next: 5 });
    assert.deepEqual(planResend({ mined: 3, pending: 3 }, { next: 8, minedSeen: 6, known: known(1, 2) }), { resend: [], fill: [], next: 3 });
  });

  it('unknown nonces the node still holds are left alone: next never goes below its pending nonce', () => {
    const plan = planResend({ mined: 3, pending: 9 }, { next: 8, minedSeen: 6, known: known(1, 2) });
    assert.deepEqual(plan, { resend: [], fill: [], next: 8 });
  });
});

describe('chain: the nonce manager remembers what it sent, bounded', () => {
  const tx = (nonce: number): SentTransaction => ({ nonce, gas: 21_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, hashes: ['0x01'], raw: '0x02', sentAt: 0, broadcastAt: 0 });

  it('marks mined below the node mined nonce, and in flight again when the node lost the block', () => {
    const sent = new SentTransactions(60_000, 100);
    for (const n of range(0, 5)) sent.add(tx(n));
    const first = sent.follow(3, 1_000);
    assert.deepEqual(first.mined.map((t) => t.nonce), [0, 1, 2]);
    assert.deepEqual(sent.inFlight().map((t) => t.nonce), [3, 4]);
    const lost = sent.follow(1, 2_000);
    assert.deepEqual(lost.lost.map((t) => t.nonce), [1, 2]);
    assert.deepEqual(sent.inFlight().map((t) => t.nonce), [1, 2, 3, 4]);
  });

  it('forgets mined ones past their age or beyond the count, never one in flight', () => {
    const sent = new SentTransactions(60_000, 3);
    for (const n of range(0, 10)) sent.add(tx(n));
    sent.follow(8, 0);
    sent.evict(1_000);
    assert.deepEqual([...sent.nonces()].sort((a, b) => a - b), [5, 6, 7, 8, 9], 'the newest 3 mined and both in flight');
    sent.evict(61_001);
    assert.deepEqual([...sent.nonces()].sort((a, b) => a - b), [8, 9]);
  });
});

describe('chain: a node refusing a transaction handed back because it has it', () => {
  it('already known or imported, or mined (nonce too low): nothing to do; anything else is a failure', () => {
    assert.ok(refusedAsAlreadyHeld(new Error('transaction already imported')));
    assert.ok(refusedAsAlreadyHeld(Object.assign(new Error('RPC failed'), { details: 'already known' })));
    assert.ok(refusedAsAlreadyHeld(new Error('outer', { cause: new Error('nonce too low') })));
    assert.ok(!refusedAsAlreadyHeld(new Error('replacement transaction underpriced')));
    assert.ok(!refusedAsAlreadyHeld(new Error('fetch failed')));
    assert.ok(!refusedAsAlreadyHeld('already known'));
  });
});
