import assert from 'node:assert/strict';
import { BacklogPriority } from '../../workers/backlog-priority.js';

describe('worker: settlement takes the CPU back under backlog (BacklogPriority)', () => {
  const make = (opts: { boostAt?: number; refuse?: boolean } = {}) => {
    const set: number[] = [];
    const logs: string[] = [];
    const p = new BacklogPriority({
      nice: 10,
      boostAt: opts.boostAt ?? 100,
      setGroupNice: (n) => {
        if (opts.refuse) throw new Error('EPERM');
        set.push(n);
      },
      log: (msg) => logs.push(msg),
    });
    return { p, set, logs };
  };

  it('goes back to niceness 0 once the shards together hold boostAt, and yields again below half of it', () => {
    const { p, set } = make();
    p.observe(0, 60);
    assert.deepEqual(set, [], '60 waiting: still yielding');
    p.observe(1, 40);
    assert.deepEqual(set, [0], '100 across both shards: normal priority');
    p.observe(0, 30);
    assert.deepEqual(set, [0], '70 waiting: stays up (hysteresis)');
    p.observe(1, 10);
    assert.deepEqual(set, [0, 10], '40 waiting: yields again');
  });

  it('says once that the platform refuses, and stops trying', () => {
    const { p, set, logs } = make({ refuse: true });
    p.observe(0, 500);
    p.observe(0, 900);
    assert.deepEqual(set, []);
    assert.equal(logs.length, 1);
    assert.match(logs[0]!, /cannot take its CPU priority back/);
  });

  it('does nothing with boostAt 0', () => {
    const { p, set } = make({ boostAt: 0 });
    p.observe(0, 10_000);
    assert.deepEqual(set, []);
  });
});
