import assert from 'node:assert/strict';
import type { Replicas } from '../../tools/stack/cluster/replicas.js';
import { supervisedWithReplicas } from '../../tools/stack/cluster/supervised.js';
import type { StackHandle } from '../../tools/stack/stack.js';
import { CrashLoopGuard, StackSupervisor, type RestartPolicy } from '../../tools/stack/supervisor.js';

const policy: RestartPolicy = { maxRestarts: 5, windowMs: 60_000, initialDelayMs: 10, maxDelayMs: 40 };
const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok());
};

describe('stack supervisor', function () {
  it('restarts with a doubling, capped backoff and gives up on the sixth crash within a minute', function () {
    const guard = new CrashLoopGuard(policy);
    const delays = [0, 1, 2, 3, 4].map((i) => guard.onCrash('ferretdb', 1_000 + i));
    assert.deepEqual(delays, [1, 2, 3, 4, 5].map((attempt) => ({ restart: true, attempt, delayMs: Math.min(40, 10 * 2 ** (attempt - 1)) })));
    assert.deepEqual(guard.onCrash('ferretdb', 1_005), { restart: false, crashes: 6 });
    assert.equal(guard.onCrash('anvil', 1_006).restart, true, 'each part has its own history');
  });

  it('forgets crashes older than the window', function () {
    const guard = new CrashLoopGuard(policy);
    for (let i = 0; i < 5; i++) guard.onCrash('worker', i);
    assert.deepEqual(guard.onCrash('worker', 60_010), { restart: true, attempt: 1, delayMs: 10 });
  });

  it('restarts the part that died, says so, and stops everything naming the part and its log on a crash loop', async function () {
    const restarted: string[] = [];
    const lines: string[] = [];
    let gaveUp: string | undefined;
    let failRestarts = false;
    const stack = {
      parts: () => [{ name: 'ferretdb', logFile: '/data/logs/ferretdb.log' }],
      restartPart: async (name: string) => {
        restarted.push(name);
        if (failRestarts) throw new Error('MongoDB ping timed out\nstack');
      },
    };
    const supervisor = new StackSupervisor(stack, { log: (m) => lines.push(m), giveUp: (r) => (gaveUp = r), policy });
    supervisor.partExited('ferretdb', { code: null, signal: 'SIGKILL' });
    await until(() => lines.some((l) => l.startsWith('ferretdb is back')));
    assert.deepEqual(restarted, ['ferretdb']);
    assert.match(lines[0]!, /^ferretdb exited unexpectedly \(signal SIGKILL\); restarting it in 0\.0 s \(restart 1 within a minute\)$/);

    // A restart that fails counts as another crash, until the loop is called.
    failRestarts = true;
    supervisor.partExited('ferretdb', { code: 1, signal: null });
    await until(() => gaveUp !== undefined);
    assert.equal(restarted.length, 5, 'crashes 1 to 5 restarted, the sixth stops everything');
    assert.match(gaveUp!, /^ferretdb crashed 6 times within 60 s \(last: restart failed: MongoDB ping timed out\); stopping everything\. See its log, \/data\/logs\/ferretdb\.log\.$/);
    supervisor.partExited('ferretdb', { code: 1, signal: null });
    assert.equal(restarted.length, 5, 'nothing more once stopped');
  });

  it("restarts the cluster's replicas as it does the stack's own parts, and names a replica's log on its crash loop", async function () {
    const restarted: string[] = [];
    const lines: string[] = [];
    let gaveUp: string | undefined;
    const stack = {
      parts: () => [{ name: 'worker', logFile: '/data/logs/worker.log' }],
      restartPart: async (name: string) => void restarted.push(`stack:${name}`),
    } as unknown as StackHandle;
    const replicas = {
      parts: () => [{ name: 'api-2', logFile: '/data/logs/api-2.log' }, { name: 'worker-2', logFile: '/data/logs/worker-2.log' }],
      restart: async (name: string) => {
        restarted.push(`replicas:${name}`);
        if (name === 'worker-2') throw new Error('worker-2: no line matching worker ready');
      },
    } as unknown as Replicas;
    const supervised = supervisedWithReplicas(stack, replicas);
    assert.deepEqual(supervised.parts().map((p) => p.name), ['worker', 'api-2', 'worker-2']);
    const supervisor = new StackSupervisor(supervised, { log: (m) => lines.push(m), giveUp: (r) => (gaveUp = r), policy });
    supervisor.partExited('api-2', { code: null, signal: 'SIGKILL' });
    supervisor.partExited('worker', { code: null, signal: 'SIGKILL' });
    await until(() => lines.some((l) => l.startsWith('api-2 is back')) && lines.some((l) => l.startsWith('worker is back')));
    assert.deepEqual(restarted.sort(), ['replicas:api-2', 'stack:worker']);

    supervisor.partExited('worker-2', { code: 1, signal: null });
    await until(() => gaveUp !== undefined);
    assert.match(gaveUp!, /^worker-2 crashed 6 times within 60 s \(last: restart failed: worker-2: no line matching worker ready\); stopping everything\. See its log, \/data\/logs\/worker-2\.log\.$/);
    assert.equal(supervisedWithReplicas(stack, undefined).parts().length, 1, 'the dev topology has no replicas');
  });
});
