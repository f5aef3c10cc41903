import type { Context } from 'mocha';
import { ensureStackTools, resolveMongod } from '../../tools/stack/tools.js';
import { logTails, stackStarted, stopStack } from './stack.js';

let failures = 0;

/** Root hooks: the stack starts lazily in getStack() and stops once after the whole run. */
export const mochaHooks = {
  /**
   * The stack's tools, fetched or built into the per-user cache before any test's own hooks run: a
   * first run on an empty cache spends its minutes here, not inside a stack start's timeout.
   */
  async beforeAll(this: Context) {
    this.timeout(30 * 60_000);
    const ferretdb = !process.env.TEST_MONGODB_URI && !resolveMongod();
    await ensureStackTools({ cliPath: process.env.TEMPORAL_CLI_PATH, ferretdb, log: (m) => process.stderr.write(`tools | ${m}\n`) });
  },
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
