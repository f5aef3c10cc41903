import assert from 'node:assert/strict';
import { encodeAbiParameters, keccak256, numberToHex, type Hex } from 'viem';
import { erc20BalanceOf, type World } from '../helpers/world.js';
import type { AnvilControl } from '../support/anvil-control.js';

/** TestUSDC's storage: owner at slot 0, totalSupply at 1, balanceOf at 2. */
const BALANCE_OF_SLOT = 2n;

export interface CreditPool {
  /** Sets the settlement contract's USDC balance to zero in place, so an already broadcast settleBatch reverts when mined. */
  drain(): Promise<void>;
  /** Puts the balance drain() took back. */
  restore(): Promise<void>;
}

/** The settlement contract's USDC pool, emptied and refilled by writing its balance slot directly (no transaction). */
export async function creditPool(w: World, chain: AnvilControl): Promise<CreditPool> {
  const slot = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [w.settlement, BALANCE_OF_SLOT]));
  const balance = () => w.publicClient.readContract({ address: w.asset, abi: [erc20BalanceOf], functionName: 'balanceOf', args: [w.settlement] });
  const funded = await balance();
  assert.ok(funded > 0n, 'the pool starts funded');
  assert.equal(BigInt(await chain.getStorageAt(w.asset, slot)), funded, 'balanceOf(settlement) lives at the computed slot');
  const word = (v: bigint): Hex => numberToHex(v, { size: 32 });
  let taken: bigint | undefined;
  return {
    async drain() {
      taken = await balance();
      await chain.setStorageAt(w.asset, slot, word(0n));
      assert.equal(await balance(), 0n);
    },
    async restore() {
      assert.ok(taken !== undefined, 'restore() after drain()');
      await chain.setStorageAt(w.asset, slot, word(taken));
      assert.equal(await balance(), taken);
    },
  };
}
