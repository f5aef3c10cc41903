import type { Context } from 'mocha';
import { logTails, stackStarted, stopStack } from './stack.js';

let failures = 0;

/** Root hooks: the stack starts lazily in getStack() and stops once after the whole run. */
export const mochaHooks = {
  afterEach(this: Context) {
    if (this.currentTest?.state === 'failed') failures += 1;
  },
  async afterAll(this: Context) {
    this.timeout(120_000);
    if (!stackStarted()) return;
    if (failures > 0) process.stderr.write(`\n${logTails()}\n`);
    await stopStack();
  },
};
