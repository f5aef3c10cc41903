import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { bashSession } from '../support/bash-session.js';

describe('bash session for README blocks', function () {
  this.timeout(20_000);

  it('carries variables between blocks, names the failing block and command, and its output', async function () {
    const s = bashSession(['A=kept; echo one\n', 'echo "two $A"\ncurl_missing_cmd --flag\necho never\n', 'echo three\n'], { cwd: tmpdir(), env: process.env, timeoutMs: 10_000 });
    try {
      const r = await s.run();
      assert.equal(r.ok, false);
      assert.equal(r.failedBlock, 1);
      assert.match(r.failure ?? '', /^failed \(exit 127\): curl_missing_cmd --flag$/);
      assert.match(r.outputs[1] ?? '', /two kept/);
      assert.doesNotMatch(r.outputs[1] ?? '', /never/);
      assert.equal(r.outputs.length, 2);
    } finally {
      await s.stop();
    }
  });

  it('stop() ends the background jobs a block left running', async function () {
    const s = bashSession(['sleep 300 &\necho "job $!"\n'], { cwd: tmpdir(), env: process.env, timeoutMs: 10_000 });
    const r = await s.run();
    assert.equal(r.ok, true);
    const job = Number(/job (\d+)/.exec(s.log())?.[1]);
    assert.ok(job > 0);
    process.kill(job, 0); // still running after the shell exited
    await s.stop();
    assert.throws(() => process.kill(job, 0), /ESRCH/);
  });
});
