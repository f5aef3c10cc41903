import { loadEnv } from '../../src/config/env.js';
import { ensureStackTools, resolveMongod } from './tools.js';

/**
 * Fetches or builds the embedded stack's tools into the per-user cache and exits: what a first
 * `npm start` does before anything else, on its own (used by npm test before its suites).
 */
const env = loadEnv();
const log = (m: string) => process.stderr.write(`tools    | ${m}\n`);
const ferretdb = !env.MONGODB_URI && !process.env.TEST_MONGODB_URI && !resolveMongod();
const tools = await ensureStackTools({ cliPath: env.TEMPORAL_CLI_PATH, ferretdb, log });
log(`ready: ${Object.values(tools).filter(Boolean).join(', ')}`);
