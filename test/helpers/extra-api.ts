import { join } from 'node:path';
import type { Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { projectRoot } from '../../src/config/paths.js';
import { processArgs } from '../../tools/stack/entries.js';
import { freePort, spawnManaged, waitForHttp, type ManagedProcess } from '../../tools/stack/processes.js';
import type { StackHandle } from '../../tools/stack/stack.js';
import { getStack } from '../support/stack.js';

export interface ExtraApi {
  /** `http://127.0.0.1:<port>/api/v1` */
  baseUrl: string;
  origin: string;
  proc: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * Another API process against the test stack's store, Temporal and chain, spawned the way the
 * stack spawns its own (same entry, same environment minus the settler key), on its own port.
 * `extraEnv` overrides settings for this process only (e.g. METRICS_TOKEN). `on` picks another
 * stack than the shared one, and `port` a fixed port (to restart the process where it was).
 */
export async function startExtraApi(name: string, extraEnv: Record<string, string> = {}, on: { stack?: StackHandle; port?: number } = {}): Promise<ExtraApi> {
  const stack = on.stack ?? (await getStack());
  const { SETTLER_PRIVATE_KEY: _settlerKey, ...apiEnv } = stack.env;
  const port = on.port ?? (await freePort());
  const proc = spawnManaged({
    name,
    command: process.execPath,
    args: processArgs('api'),
    env: { ...apiEnv, ...extraEnv, API_HOST: '127.0.0.1', API_PORT: String(port) },
    cwd: projectRoot(),
    logFile: join(stack.dataDir, 'logs', `${name}.log`),
  });
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${origin}/api/v1/facilitator/health`, { proc, timeoutMs: 60_000, what: `${name} health` });
  } catch (err) {
    await proc.stop(10_000);
    throw err;
  }
  return {
    baseUrl: `${origin}/api/v1`,
    origin,
    proc,
    async stop() {
      await proc.stop(10_000);
    },
  };
}

export interface ExtraWorker {
  proc: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * Another worker process on the stack's task queue, spawned the way the stack spawns its own (same
 * entry, same environment) but with its own settler key (which the contract must allow: setSettler)
 * and no metrics endpoint (the stack's worker holds WORKER_METRICS_PORT). Resolves once it printed
 * 'worker ready'; logs to <dataDir>/logs/<name>.log.
 */
export async function startExtraWorker(name: string, settlerKey: Hex, on: { stack?: StackHandle; extraEnv?: Record<string, string> } = {}): Promise<ExtraWorker> {
  const stack = on.stack ?? (await getStack());
  const proc = spawnManaged({
    name,
    command: process.execPath,
    args: processArgs('worker'),
    env: { ...stack.env, ...on.extraEnv, SETTLER_PRIVATE_KEY: settlerKey, SETTLER_ADDRESS: privateKeyToAddress(settlerKey), WORKER_METRICS_PORT: '0' },
    cwd: projectRoot(),
    logFile: join(stack.dataDir, 'logs', `${name}.log`),
  });
  try {
    await proc.waitForLine('worker ready', 120_000);
  } catch (err) {
    await proc.stop(10_000);
    throw err;
  }
  return {
    proc,
    async stop() {
      await proc.stop(15_000);
    },
  };
}
