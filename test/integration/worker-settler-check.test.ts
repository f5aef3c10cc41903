import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { startExtraWorker } from '../helpers/extra-api.js';
import { getStack } from '../support/stack.js';

const NOT_ALLOWED = 'settler key not allowed by the settlement contract';

function logOf(dataDir: string, name: string): string {
  const file = join(dataDir, 'logs', `${name}.log`);
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

describe('worker start-up: the settler key check', function () {
  this.timeout(180_000);

  it('says at start when the contract does not allow its key, and not when it does', async () => {
    const stack = await getStack();
    const key = generatePrivateKey();
    // Task queues of its own: this worker must not pick up the shared stack's settlement work.
    const worker = await startExtraWorker('worker-unallowed', key, { stack, extraEnv: { TEMPORAL_TASK_QUEUE: `settler-check-${Date.now()}`, SETTLEMENT_TASK_QUEUE: `settler-check-settlement-${Date.now()}` } });
    try {
      const deadline = Date.now() + 20_000;
      while (!logOf(stack.dataDir, 'worker-unallowed').includes(NOT_ALLOWED)) {
        assert.ok(Date.now() < deadline, `the unallowed worker logs "${NOT_ALLOWED}"`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const line = logOf(stack.dataDir, 'worker-unallowed').split('\n').find((l) => l.includes(NOT_ALLOWED))!;
      assert.ok(line.toLowerCase().includes(privateKeyToAddress(key).toLowerCase()), 'the line names the key by its address');
      assert.ok(!line.includes(key.slice(2)), 'never the private key');
    } finally {
      await worker.stop();
    }
    assert.ok(!logOf(stack.dataDir, 'worker').includes(NOT_ALLOWED), "the stack's own worker, whose key is allowed, says nothing");
  });
});
