import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { heartbeatWhileRunning } from '../../activities/heartbeat-while-running.js';

describe('heartbeatWhileRunning', () => {
  it('heartbeats at once and on a timer while the body runs, and stops after', async () => {
    const env = new MockActivityEnvironment();
    let beats = 0;
    env.on('heartbeat', () => beats++);
    const result = await env.run(() => heartbeatWhileRunning(() => new Promise<string>((r) => setTimeout(() => r('done'), 230)), 50));
    assert.equal(result, 'done');
    assert.ok(beats >= 4, `heartbeats while running: ${beats}`);
    const after = beats;
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(beats, after, 'no heartbeat once the body has ended');
  });

  it('stops heartbeating when the body fails, and passes the failure on', async () => {
    const env = new MockActivityEnvironment();
    let beats = 0;
    env.on('heartbeat', () => beats++);
    await assert.rejects(env.run(() => heartbeatWhileRunning(async () => Promise.reject(new Error('rpc down')), 20)), /rpc down/);
    const after = beats;
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(beats, after);
  });
});
