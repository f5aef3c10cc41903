import type { Hex } from 'viem';
import { rpcCall } from '../../tools/stack/probes.js';

/** anvil's test-only RPC methods, for tests that steer block production and chain state. */
export interface AnvilControl {
  /** Instant mining: every transaction gets its own block at once (anvil's default). */
  automine(on: boolean): Promise<void>;
  /** A block every `seconds` (0 stops interval mining); replaces automine. */
  intervalMining(seconds: number): Promise<void>;
  mine(blocks?: number): Promise<void>;
  blockNumber(): Promise<bigint>;
  /** Replaces the last `depth` blocks with as many new ones holding only `txs` (raw signed, by new-block index). */
  reorg(depth: number, txs?: { raw: Hex; blockIndex: number }[]): Promise<void>;
  rawTransaction(hash: Hex): Promise<Hex>;
  /** True while `hash` is known but not mined. */
  isPending(hash: Hex): Promise<boolean>;
  /**
   * Waits until the node holds `hash` unmined. The worker records a batch SUBMITTED with its hash
   * before its eth_sendRawTransaction returns (so a crash in between is resent, not forgotten): a
   * test that saw SUBMITTED may ask the node a moment before the transaction reaches it.
   */
  waitUntilPending(hash: Hex, timeoutMs?: number): Promise<void>;
  getStorageAt(address: Hex, slot: Hex): Promise<Hex>;
  setStorageAt(address: Hex, slot: Hex, value: Hex): Promise<void>;
}

export function anvilControl(rpcUrl: string): AnvilControl {
  const call = <T>(method: string, params: unknown[] = []) => rpcCall<T>(rpcUrl, method, params);
  return {
    async automine(on) {
      await call('evm_setAutomine', [on]);
    },
    async intervalMining(seconds) {
      await call('evm_setIntervalMining', [seconds]);
    },
    async mine(blocks = 1) {
      await call('anvil_mine', [`0x${blocks.toString(16)}`]);
    },
    async blockNumber() {
      return BigInt(await call<string>('eth_blockNumber'));
    },
    async reorg(depth, txs = []) {
      await call('anvil_reorg', [depth, txs.map((t) => [t.raw, t.blockIndex])]);
    },
    async rawTransaction(hash) {
      const raw = await call<Hex | null>('eth_getRawTransactionByHash', [hash]);
      if (!raw) throw new Error(`transaction ${hash} is unknown to the node`);
      return raw;
    },
    async isPending(hash) {
      const tx = await call<{ blockNumber: string | null } | null>('eth_getTransactionByHash', [hash]);
      return tx !== null && tx.blockNumber === null;
    },
    async waitUntilPending(hash, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!(await this.isPending(hash))) {
        if (Date.now() > deadline) throw new Error(`transaction ${hash} did not reach the node's mempool within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    getStorageAt(address, slot) {
      return call<Hex>('eth_getStorageAt', [address, slot, 'latest']);
    },
    async setStorageAt(address, slot, value) {
      await call('anvil_setStorageAt', [address, slot, value]);
    },
  };
}
