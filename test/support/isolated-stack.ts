import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StackHandle, StackOptions } from '../../tools/stack/stack.js';
import { closeWorld, connectWorld, type World } from '../helpers/world.js';
import { anvilControl, type AnvilControl } from './anvil-control.js';
import { launchTestStack, logTails, npmStartSource, settlementDecisionLines, testSource } from './stack.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface IsolatedStackSettings {
  /** Settings over the defaults (e.g. CONFIRMATIONS, BATCH_MAX_WAIT_MS). */
  env?: Record<string, string>;
  /** `test` (the default): the test stack's settings (test/support/stack.ts); `npm-start`: what npm start runs with. */
  defaults?: 'test' | 'npm-start';
  /** Put a TcpProxy between the worker and API and the node, so the test can cut their RPC. */
  rpcProxy?: boolean;
  /** A part of the stack died without being asked to (after start-up). */
  onUnexpectedExit?: StackOptions['onUnexpectedExit'];
}

export interface IsolatedStack {
  stack: StackHandle;
  /** Clients on this stack; its publicClient talks to the node directly, never through the proxy. */
  world: World;
  chain: AnvilControl;
  rpcProxy?: TcpProxy;
}

/**
 * A stack of its own for the calling describe(): fresh data dir, ports and settings, started in a
 * before hook and stopped in an after hook (with its log tails printed when a test in the block failed).
 */
export function useIsolatedStack(settings: IsolatedStackSettings = {}): () => IsolatedStack {
  let dir: string | undefined;
  let proxy: TcpProxy | undefined;
  let stack: StackHandle | undefined;
  let running: IsolatedStack | undefined;
  let failed = false;

  before(async function () {
    this.timeout(240_000);
    dir = mkdtempSync(join(tmpdir(), 'cf-fault-'));
    const source = settings.defaults === 'npm-start' ? await npmStartSource(dir, settings.env) : await testSource(dir, settings.env);
    if (settings.rpcProxy) proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(source.ANVIL_PORT) });
    stack = await launchTestStack(dir, source, {
      ...(proxy ? { childRpcUrl: proxy.url } : {}),
      ...(settings.onUnexpectedExit ? { onUnexpectedExit: settings.onUnexpectedExit } : {}),
    });
    const world = await connectWorld({ ...stack.env, RPC_URL: stack.urls.rpcUrl });
    running = { stack, world, chain: anvilControl(stack.urls.rpcUrl), ...(proxy ? { rpcProxy: proxy } : {}) };
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  after(async function () {
    this.timeout(120_000);
    if (failed && dir) process.stderr.write(`\n${logTails(dir)}\n${settlementDecisionLines(dir)}\n`);
    if (running) await closeWorld(running.world);
    await stack?.stop();
    await proxy?.close();
    if (dir) {
      if (process.env.TEST_KEEP_DATA === '1') process.stderr.write(`fault stack data kept in ${dir}\n`);
      else rmSync(dir, { recursive: true, force: true });
    }
    running = undefined;
  });

  return () => {
    if (!running) throw new Error('the isolated stack is not running (used outside its describe block?)');
    return running;
  };
}
