import assert from 'node:assert/strict';
import { MAX_WAIT_SECONDS, preferredWaitSeconds } from '../../src/http/prefer-wait.js';

describe('Prefer: wait (RFC 7240) on status polls', () => {
  it('reads whole seconds, with or without quotes, spaces or other preferences around it', () => {
    assert.equal(preferredWaitSeconds('wait=10'), 10);
    assert.equal(preferredWaitSeconds('WAIT=7'), 7);
    assert.equal(preferredWaitSeconds('wait="5"'), 5);
    assert.equal(preferredWaitSeconds(' wait = 3 '), 3);
    assert.equal(preferredWaitSeconds('return=minimal, wait=4'), 4);
    assert.equal(preferredWaitSeconds('respond-async; foo="a,wait=9", wait=2'), 2);
    assert.equal(preferredWaitSeconds('wait=6; ignored=param'), 6);
    assert.equal(preferredWaitSeconds(['return=minimal', 'wait=8']), 8);
    assert.equal(preferredWaitSeconds('wait=0'), 0);
  });

  it('clamps a longer wait to 30 s', () => {
    assert.equal(MAX_WAIT_SECONDS, 30);
    assert.equal(preferredWaitSeconds('wait=30'), 30);
    assert.equal(preferredWaitSeconds('wait=31'), 30);
    assert.equal(preferredWaitSeconds('wait=999'), 30);
    assert.equal(preferredWaitSeconds('wait=999999999'), 30);
  });

  it('ignores an absent or malformed wait (the poll is answered as a plain one)', () => {
    for (const header of [undefined, '', 'return=minimal', 'wait', 'wait=', 'wait=-1', 'wait=1.5', 'wait=abc', 'wait=1e3', 'wait= "', 'wait=1234567890', 'waiting=5', 'x-wait=5']) {
      assert.equal(preferredWaitSeconds(header), undefined, String(header));
    }
  });

  it('takes only the first wait preference, as RFC 7240 says', () => {
    assert.equal(preferredWaitSeconds('wait=3, wait=9'), 3);
    assert.equal(preferredWaitSeconds('wait=x, wait=9'), undefined);
  });
});
