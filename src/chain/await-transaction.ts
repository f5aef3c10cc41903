import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Hash, type TransactionReceipt } from 'viem';
import type { ChainContext } from './context.js';

export type TransactionConfirmation =
  | { status: 'confirmed'; transaction: string; blockNumber: string; receipt: TransactionReceipt }
  | { status: 'reverted'; transaction: string }
  | { status: 'dropped' };

/**
 * Polls a settler transaction until its receipt is `confirmations` deep: 'confirmed' or 'reverted'
 * then, or 'dropped' when the node has forgotten it for 30 s. Follows the nonce manager when it
 * replaced the transaction (same nonce, higher fee). `progress` is called each round (heartbeats).
 */
export async function awaitTransaction(
  chain: Pick<ChainContext, 'publicClient' | 'nonces'>,
  transaction: string,
  confirmations: number,
  progress: (p: { transaction: string; head: number }) => void = () => undefined,
): Promise<TransactionConfirmation> {
  const need = BigInt(Math.max(1, confirmations));
  let hash = transaction as Hash;
  let missingSince: number | undefined;
  for (;;) {
    hash = chain.nonces?.currentHash(hash) ?? hash;
    const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 });
    const receipt = await chain.publicClient.getTransactionReceipt({ hash }).catch((err: unknown) => {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw err;
    });
    if (receipt) {
      missingSince = undefined;
      if (head - receipt.blockNumber + 1n >= need) {
        return receipt.status === 'success'
          ? { status: 'confirmed', transaction: hash, blockNumber: receipt.blockNumber.toString(), receipt }
          : { status: 'reverted', transaction: hash };
      }
    } else {
      const known = await chain.publicClient.getTransaction({ hash }).then(
        () => true,
        (err: unknown) => {
          if (err instanceof TransactionNotFoundError) return false;
          throw err;
        },
      );
      if (known) missingSince = undefined;
      else if (Date.now() - (missingSince ??= Date.now()) > 30_000) return { status: 'dropped' };
    }
    progress({ transaction: hash, head: Number(head) });
    await sleep(500);
  }
}
