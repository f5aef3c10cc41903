import { loadEnv } from '../../src/config/env.js';
import { resolvePromtool } from './promtool.js';
import { ensureStackTools, resolveMongod } from './tools.js';

/**
 * Fetches or builds the embedded stack's tools into the per-user cache and exits: what a first
 * `npm start` does before anything else, on its own (used by npm test before its suites), and
 * promtool, which the unit suite runs on the alert rules.
 */
const env = loadEnv();
const log = (m: string) => process.stderr.write(`tools    | ${m}\n`);
const ferretdb = !env.MONGODB_URI && !process.env.TEST_MONGODB_URI && !resolveMongod();
const tools = await ensureStackTools({ cliPath: env.TEMPORAL_CLI_PATH, ferretdb, log });
// After the stack's own Go builds, not beside them: the two cores go to one build at a time.
const promtool = await resolvePromtool({ log, path: env.PROMTOOL_PATH });
log(`ready: ${[...Object.values(tools), promtool].filter(Boolean).join(', ')}`);
