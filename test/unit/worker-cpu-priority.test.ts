import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autogroupNiceOf, lowerCpuPriority, sessionOf, type PriorityHost } from '../../workers/cpu-priority.js';

describe('worker: CPU priority (lowerCpuPriority against a stand-in /proc/self)', () => {
  let dir: string;
  let threadNice: Map<number, number>;
  let host: PriorityHost;
  const stat = (pid: number, session: number) => `${pid} (node worker) S 1 ${session} ${session} 0 -1 4194560 1 0 0 0`;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cf-proc-'));
    for (const tid of ['4242', '4243', '4250']) mkdirSync(join(dir, 'task', tid), { recursive: true });
    threadNice = new Map([[4242, 0], [4243, 0], [4250, 0]]);
    host = { procSelf: dir, pid: 4242, threadNice: (tid) => threadNice.get(tid)!, setThreadNice: (tid, n) => void threadNice.set(tid, n) };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the session past a command name holding spaces and parentheses, and an autogroup line', () => {
    assert.equal(sessionOf('77 (a (b) c) S 1 70 71 0'), 71);
    assert.equal(autogroupNiceOf('/autogroup-12 nice 0\n'), 0);
    assert.equal(autogroupNiceOf('/autogroup-12 nice 7'), 7);
  });

  it('lowers the autogroup and the thread when the worker leads its session', () => {
    writeFileSync(join(dir, 'stat'), stat(4242, 4242));
    writeFileSync(join(dir, 'autogroup'), '/autogroup-9 nice 0\n');
    assert.deepEqual(lowerCpuPriority(10, host), { nice: 10, scope: 'autogroup' });
    assert.equal(readFileSync(join(dir, 'autogroup'), 'utf8'), '10');
    assert.deepEqual([...threadNice.values()], [10, 10, 10]);
  });

  it('leaves a shared session alone: only its own threads are lowered', () => {
    writeFileSync(join(dir, 'stat'), stat(4242, 100));
    writeFileSync(join(dir, 'autogroup'), '/autogroup-9 nice 0\n');
    const outcome = lowerCpuPriority(10, host);
    assert.equal(outcome.scope, 'threads');
    assert.match(outcome.reason ?? '', /does not lead its session/);
    assert.equal(readFileSync(join(dir, 'autogroup'), 'utf8'), '/autogroup-9 nice 0\n');
    assert.deepEqual([...threadNice.values()], [10, 10, 10]);
  });

  it('never raises a priority already lower than asked, and 0 changes nothing', () => {
    writeFileSync(join(dir, 'stat'), stat(4242, 4242));
    writeFileSync(join(dir, 'autogroup'), '/autogroup-9 nice 15\n');
    threadNice.set(4243, 15);
    assert.deepEqual(lowerCpuPriority(10, host), { nice: 10, scope: 'autogroup' });
    assert.equal(readFileSync(join(dir, 'autogroup'), 'utf8'), '/autogroup-9 nice 15\n');
    assert.deepEqual([...threadNice.values()], [10, 15, 10]);
    assert.deepEqual(lowerCpuPriority(0, host), { nice: 0, scope: 'none' });
  });

  it('passes over a thread that ended meanwhile, and reports any other failure', () => {
    writeFileSync(join(dir, 'stat'), stat(4242, 4242));
    writeFileSync(join(dir, 'autogroup'), '/autogroup-9 nice 0\n');
    const gone = Object.assign(new Error('uv_os_setpriority returned ESRCH (no such process)'), { code: 'ERR_SYSTEM_ERROR', info: { code: 'ESRCH' } });
    const set = host.setThreadNice;
    host.setThreadNice = (tid, n) => {
      if (tid === 4243) throw gone;
      set(tid, n);
    };
    assert.deepEqual(lowerCpuPriority(10, host), { nice: 10, scope: 'autogroup' });
    assert.deepEqual([...threadNice.values()], [10, 0, 10]);
    host.setThreadNice = () => {
      throw Object.assign(new Error('uv_os_setpriority returned EACCES (permission denied)'), { code: 'ERR_SYSTEM_ERROR', info: { code: 'EACCES' } });
    };
    const denied = lowerCpuPriority(12, host);
    assert.equal(denied.scope, 'none');
    assert.match(denied.reason ?? '', /EACCES/);
  });

  it('without autogroup scheduling lowers the threads and says why', () => {
    writeFileSync(join(dir, 'stat'), stat(4242, 4242));
    const outcome = lowerCpuPriority(5, host);
    assert.deepEqual(outcome, { nice: 5, scope: 'threads', reason: 'no autogroup scheduling on this kernel' });
    assert.deepEqual([...threadNice.values()], [5, 5, 5]);
  });
});
