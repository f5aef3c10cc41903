import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { throwawayStackSource } from '../../tools/stack/throwaway-source.js';
import { startStack, type StackHandle, type StackOptions } from '../../tools/stack/stack.js';

export type { StackHandle } from '../../tools/stack/stack.js';

let dataDir: string | undefined;
let pending: Promise<StackHandle> | undefined;

/** The test stack's settings for a stack in `dir`, on free ports; `overrides` win. */
export async function testSource(dir: string, overrides: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
  const external = process.env.TEST_MONGODB_URI;
  return {
    ...(await throwawayStackSource(dir)),
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    CHAIN_ID: '84532',
    BATCH_MAX_WAIT_MS: '1000',
    // The fixed one-second window, not group commit: many tests void, list or watch a payment while
    // it is QUEUED. Group commit (the default) is tested on stacks of its own (batch-policy.test).
    BATCH_MIN_PAYMENTS: '100',
    CONFIRMATIONS: '1',
    CAPTURE_SWEEP_AFTER_SECONDS: '2',
    CAPTURE_SWEEP_INTERVAL_SECONDS: '1',
    // Concurrency tests send 100 captures at once: on a busy box the in-flight limit, adapted to a
    // 250 ms target, would shed some. Shedding is tested on admission controllers of its own.
    CAPTURE_TARGET_LATENCY_MS: '10000',
    // And a hundred at once all find a slot (past the default 64 the rest wait 250 ms at most).
    CAPTURE_MAX_IN_FLIGHT: '128',
    // Those hundred come from one merchant: no per-merchant share (capture-slow-body tests it).
    CAPTURE_MERCHANT_SHARE: '1',
    // Tests that snapshot workflow states right after a poll saw CONFIRMED want each batch's
    // workflow signals at once; the spread itself is unit-tested (notify-pace) and benched.
    SETTLEMENT_NOTIFY_SPREAD_MS: '0',
    OAUTH_DCR_ALLOWED_HOSTS: 'agent.example.com',
    // Every test registers clients from 127.0.0.1; oauth-hardening tests the limit on a stack of its own.
    OAUTH_DCR_PER_MIN: '100000',
    OAUTH_DCR_BURST: '100000',
    // Likewise every wallet sign-in; borrower-web-hardening tests the limit on a stack of its own.
    WALLET_SIGNIN_PER_MIN: '100000',
    WALLET_SIGNIN_BURST: '100000',
    // Webhook receivers in tests listen on 127.0.0.1 (the SSRF guard refuses it in production).
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_INITIAL_MS: '500',
    WEBHOOK_RETRY_MAX_MS: '4000',
    ...(external ? { MONGODB_URI: external, MONGODB_DB: `cf_test_${process.pid}_${Date.now()}` } : {}),
    ...overrides,
  };
}

/**
 * What `npm start` runs with (the src/config/env.ts defaults: NODE_ENV=development, DEV_TOOLS=true,
 * group commit, ...), but on free ports in `dir`; `overrides` win. For tests of the documented behaviour.
 */
export async function npmStartSource(dir: string, overrides: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
  const external = process.env.TEST_MONGODB_URI;
  return {
    ...(await throwawayStackSource(dir)),
    NODE_ENV: 'development',
    DEV_TOOLS: 'true',
    ...(external ? { MONGODB_URI: external, MONGODB_DB: `cf_test_${process.pid}_${Date.now()}` } : {}),
    ...overrides,
  };
}

/** A quiet, headless stack in `dir` that logs to <dir>/stack.log and <dir>/logs; prints the log tails if it fails to start. */
export async function launchTestStack(dir: string, source: NodeJS.ProcessEnv, extra: Pick<StackOptions, 'childRpcUrl' | 'onUnexpectedExit'> = {}): Promise<StackHandle> {
  try {
    return await startStack({
      ...extra,
      source,
      quiet: true,
      headless: true,
      log: (m) => appendFileSync(join(dir, 'stack.log'), `${new Date().toISOString()} ${m}\n`),
    });
  } catch (err) {
    process.stderr.write(`\nthe test stack failed to start: ${err instanceof Error ? err.message : String(err)}\n${logTails(dir)}\n`);
    throw err;
  }
}

/** The whole stack, started once per test run on first use (a unit-only run never starts it). */
export function getStack(): Promise<StackHandle> {
  pending ??= (async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cf-test-'));
    return launchTestStack(dataDir, await testSource(dataDir));
  })();
  return pending;
}

export function stackStarted(): boolean {
  return pending !== undefined;
}

/** The last lines of every log the stack in `dir` (default: the shared one) wrote, for a failed run. */
export function logTails(dir: string | undefined = dataDir, lines = 40): string {
  if (!dir) return '';
  const files = [join(dir, 'stack.log')];
  const logs = join(dir, 'logs');
  if (existsSync(logs)) for (const f of readdirSync(logs).sort()) files.push(join(logs, f));
  return files
    .filter((f) => existsSync(f))
    .map((f) => {
      const tail = readFileSync(f, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      return `----- ${f} (last ${lines} lines) -----\n${tail}`;
    })
    .join('\n');
}

/** The log lines of settlement's rare decisions (claims released, sets adopted or abandoned, resync, conflicts), for a failed test's report. */
export function settlementDecisionLines(dir: string | undefined = dataDir, limit = 80): string {
  if (!dir) return '';
  const file = join(dir, 'logs', 'worker.log');
  if (!existsSync(file)) return '';
  const rare = /released|adopted|abandon|CONFLICT|resync|mismatch|HALT/;
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => rare.test(l) && !l.includes('"settledOnChain":[],"abandoned":[],"resent":[],"moved":[],"conflicts":[]'));
  return `----- settlement decisions in ${file} (${lines.length}, last ${limit}) -----\n${lines.slice(-limit).join('\n')}`;
}

export async function stopStack(): Promise<void> {
  if (!pending) return;
  const running = pending;
  pending = undefined;
  try {
    await (await running.catch(() => undefined))?.stop();
  } finally {
    if (dataDir) {
      if (process.env.TEST_KEEP_DATA === '1') process.stderr.write(`test stack data kept in ${dataDir}\n`);
      else rmSync(dataDir, { recursive: true, force: true });
    }
    dataDir = undefined;
  }
}
