import assert from 'node:assert/strict';
import { Lru } from '@credit-facilitator/wire/lru';

describe('Lru', function () {
  it('keeps at most its capacity, forgetting the least recently used first', function () {
    const lru = new Lru<number>(3);
    for (const [k, v] of [['a', 1], ['b', 2], ['c', 3]] as const) lru.set(k, v);
    assert.equal(lru.get('a'), 1); // a is now the most recent
    lru.set('d', 4);
    assert.equal(lru.size, 3);
    assert.equal(lru.get('b'), undefined);
    assert.deepEqual([lru.get('a'), lru.get('c'), lru.get('d')], [1, 3, 4]);
  });

  it('replaces a key in place without evicting another', function () {
    const lru = new Lru<string>(2);
    lru.set('x', 'one');
    lru.set('y', 'two');
    lru.set('x', 'three');
    assert.equal(lru.size, 2);
    assert.equal(lru.get('x'), 'three');
    assert.equal(lru.get('y'), 'two');
  });

  it('stays at its capacity however many keys pass through it', function () {
    const lru = new Lru<number>(100);
    for (let i = 0; i < 10_000; i++) lru.set(`k${i}`, i);
    assert.equal(lru.size, 100);
    assert.equal(lru.get('k9999'), 9999);
    assert.equal(lru.get('k9899'), undefined);
  });

  it('refuses a capacity that is not a positive integer', function () {
    assert.throws(() => new Lru(0), RangeError);
    assert.throws(() => new Lru(1.5), RangeError);
  });

  it('peek reads without refreshing, entries lists least recently used first, delete forgets', function () {
    const lru = new Lru<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    assert.equal(lru.peek('a'), 1);
    lru.set('c', 3); // a was only peeked: still the least recently used, so it goes
    assert.equal(lru.peek('a'), undefined);
    assert.deepEqual([...lru.entries()], [['b', 2], ['c', 3]]);
    lru.delete('b');
    assert.deepEqual([...lru.entries()], [['c', 3]]);
  });
});
