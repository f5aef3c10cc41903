import type { Hash } from 'viem';
import type { StackHandle } from '../../tools/stack/stack.js';
import { startExtraApi, type ExtraApi } from '../helpers/extra-api.js';
import type { World } from '../helpers/world.js';
import type { AnvilControl } from '../support/anvil-control.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import type { CreditPool } from './credit-pool.js';

/** The faults the load suite injects, each while captures flow. */
export const FAULT_KINDS = ['worker', 'api', 'store', 'temporal', 'rpc', 'revert'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const FAULT_LABELS: Record<FaultKind, string> = {
  worker: 'worker SIGKILL',
  api: 'SIGKILL of one of two API processes',
  store: 'store (FerretDB) SIGKILL, restarted on its data',
  temporal: 'Temporal dev server SIGKILL, restarted on its data',
  rpc: 'RPC blackholed',
  revert: 'a settleBatch reverted on chain',
};

/** The second API process, killed and started again on the same port. */
export class SecondApi {
  private current: ExtraApi | undefined;
  constructor(
    private readonly stack: StackHandle,
    private readonly port: number,
  ) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/api/v1`;
  }

  async start(): Promise<void> {
    this.current = await startExtraApi('api-2', {}, { stack: this.stack, port: this.port });
  }

  async kill(): Promise<void> {
    const proc = this.current?.proc;
    if (!proc) return;
    proc.kill('SIGKILL');
    await proc.exited;
  }

  async stop(): Promise<void> {
    await this.current?.stop();
  }
}

export interface FaultTargets {
  stack: StackHandle;
  w: World;
  chain: AnvilControl;
  rpcProxy: TcpProxy;
  pool: CreditPool;
  secondApi: SecondApi;
  rpcOutageMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Injects one fault and returns once the faulty part is back (restarted, reconnected, refilled). */
export async function inject(kind: FaultKind, t: FaultTargets): Promise<void> {
  switch (kind) {
    case 'worker':
      await t.stack.killWorker('SIGKILL');
      await t.stack.restartWorker();
      return;
    case 'api':
      await t.secondApi.kill();
      await sleep(1_000);
      await t.secondApi.start();
      return;
    case 'store':
      await t.stack.restartStore({ kill: true, downMs: 2_000 });
      return;
    case 'temporal':
      await t.stack.restartTemporal({ kill: true, downMs: 3_000 });
      return;
    case 'rpc':
      t.rpcProxy.setMode('blackhole');
      await sleep(t.rpcOutageMs);
      t.rpcProxy.setMode('pass');
      return;
    case 'revert':
      await revertOneSettleBatch(t);
      return;
  }
}

/**
 * Waits for a settler transaction in the mempool (blocks come once a second), empties the credit
 * pool until the block that holds it is mined, so it reverts on chain past its simulation, then
 * refills the pool. Tries again when the transaction was mined before the pool was emptied.
 * Returns the reverted transactions.
 */
export async function revertOneSettleBatch(t: Pick<FaultTargets, 'w' | 'stack' | 'pool'>, timeoutMs = 60_000): Promise<Hash[]> {
  const client = t.w.publicClient;
  const settler = t.stack.chain.settlerAddress;
  const count = (blockTag: 'pending' | 'latest') => client.getTransactionCount({ address: settler, blockTag });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const [pending, mined] = await Promise.all([count('pending'), count('latest')]);
    if (pending <= mined) {
      await sleep(25);
      continue;
    }
    const head = await client.getBlockNumber({ cacheTime: 0 });
    await t.pool.drain();
    try {
      while ((await count('latest')) <= mined) await sleep(50);
    } finally {
      await t.pool.restore();
    }
    const reverted: Hash[] = [];
    for (let n = head + 1n, last = await client.getBlockNumber({ cacheTime: 0 }); n <= last; n++) {
      const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
      for (const tx of block.transactions) {
        if (tx.from.toLowerCase() !== settler.toLowerCase()) continue;
        if ((await client.getTransactionReceipt({ hash: tx.hash })).status === 'reverted') reverted.push(tx.hash);
      }
    }
    if (reverted.length > 0) return reverted;
  }
  throw new Error(`no settler transaction could be reverted within ${timeoutMs} ms`);
}
