import assert from 'node:assert/strict';
import { NotifyPace } from '../../src/settlement/notify-pace.js';

describe('batch end: signals paced to the shard\'s own round', () => {
  it('spreads the first batch over the most, then each over its round\'s work since the previous signals started', () => {
    const pace = new NotifyPace(1500);
    pace.ended('b1', 1_000);
    assert.equal(pace.spreadMs(0, 'b1', 1_010), 1500, 'no previous round on this shard: the full spread');
    pace.ended('b2', 1_610); // the round's work took 600 ms after b1's signals started
    assert.equal(pace.spreadMs(0, 'b2', 2_520), 600, 'held until b1 was told: still paced to the 600 ms of work');
    pace.ended('b3', 5_000);
    assert.equal(pace.spreadMs(0, 'b3', 5_000), 1500, 'a long round: at most the full spread');
  });

  it('keeps shards apart, and falls back to the full spread for a batch ended on another worker', () => {
    const pace = new NotifyPace(1500);
    pace.ended('a1', 0);
    pace.ended('b1', 0);
    pace.spreadMs(0, 'a1', 0);
    pace.spreadMs(1, 'b1', 0);
    pace.ended('a2', 400);
    assert.equal(pace.spreadMs(0, 'a2', 400), 400);
    assert.equal(pace.spreadMs(1, 'b2', 700), 1500, 'b2 ended elsewhere');
  });

  it('forgets the oldest ends beyond a bound', () => {
    const pace = new NotifyPace(1000);
    pace.spreadMs(0, 'x', 0);
    for (let i = 0; i < 100; i++) pace.ended(`b${i}`, 10);
    assert.equal(pace.spreadMs(0, 'b0', 20), 1000, 'b0 forgotten');
    assert.equal(pace.spreadMs(0, 'b99', 40), 1000, 'b99 kept, but it ended before the previous signals started: no round to pace to');
  });
});
