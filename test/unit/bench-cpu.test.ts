import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { snapshot } from '../../bench/cpu.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function childrenOf(pid: number): string {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
}

describe('bench CPU per process', function () {
  // A shell that burns nothing itself runs a child that burns 0.5 s of CPU, as the postmaster
  // forks a backend per connection; the shell's figure must carry the child's.
  it("counts a process's children: the live ones by parent pid, the exited ones once reaped", async function () {
    if (!existsSync('/proc/self/stat')) this.skip();
    this.timeout(30_000);
    const burner = `const start = process.cpuUsage(); while (process.cpuUsage(start).user < 500_000) {}`;
    const shell = spawn('sh', ['-c', `"${process.execPath}" -e '${burner}'; exec sleep 30`], { stdio: 'ignore' });
    try {
      const pid = shell.pid!;
      const seconds = () => snapshot([{ name: 'sh', pid }]).get('sh')!;
      const deadline = Date.now() + 20_000;
      let live = seconds();
      while (live < 0.2 && Date.now() < deadline) {
        await sleep(20);
        live = seconds();
      }
      assert.ok(live >= 0.2, `the running child's CPU is counted (${live} s)`);
      assert.notEqual(childrenOf(pid), '', 'the child was still running when counted');
      while (!/^\s*sleep/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')) && Date.now() < deadline) await sleep(20);
      const reaped = seconds();
      assert.ok(reaped >= 0.5 && reaped >= live, `the exited child's CPU stays counted once reaped (${reaped} s)`);
    } finally {
      shell.kill('SIGKILL');
    }
  });
});
