import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { autogroupNiceOf } from '../../workers/cpu-priority.js';
import { getStack } from '../support/stack.js';

/** A thread's niceness: the 19th field of /proc/<pid>/task/<tid>/stat; undefined for a thread that ended since it was listed. */
function threadNice(pid: number, tid: string): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

describe('worker: settlement yields the CPU to the request path (WORKER_CPU_NICE, default 10)', () => {
  it("lowers the worker's autogroup and its threads, and no other part's", async function () {
    if (!existsSync('/proc/self/autogroup')) this.skip(); // a kernel without autogroup scheduling: the unit tests cover that path
    const stack = await getStack();
    const parts = new Map(stack.parts().map((p) => [p.name, p.pid]));
    const worker = parts.get('worker')!;
    assert.equal(autogroupNiceOf(readFileSync(`/proc/${worker}/autogroup`, 'utf8')), 10, "the worker's autogroup");
    // Those that ran when it lowered itself, and those started since (Temporal's core, the workflows), which inherit it.
    const tids = readdirSync(`/proc/${worker}/task`);
    const nices = tids.map((tid) => [tid, threadNice(worker, tid)] as const).filter(([, nice]) => nice !== undefined);
    assert.ok(nices.length > 0, 'the worker has threads to check');
    assert.deepEqual(nices.filter(([, nice]) => nice !== 10), [], `every one of the worker's ${nices.length} live threads runs at nice 10`);
    for (const name of ['api', 'temporal']) {
      const pid = parts.get(name)!;
      assert.equal(autogroupNiceOf(readFileSync(`/proc/${pid}/autogroup`, 'utf8')), 0, `the ${name}'s autogroup`);
    }
  });
});
