import type { Hash, Hex } from 'viem';

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** One nonce's transaction as the nonce manager signed it. */
export interface SentTransaction extends Fees {
  nonce: number;
  gas: bigint;
  /** Every hash broadcast for this nonce, the first one first: more than one once replaced. */
  hashes: Hash[];
  /** The newest one, signed and serialized: broadcast again byte for byte when the node lost it. */
  raw: Hex;
  /** When its fees last changed (the replacement clock). */
  sentAt: number;
  /** When the node was last handed it. */
  broadcastAt: number;
  /** When a check first saw its nonce mined; unset while in flight or after the node lost the block. */
  minedAt?: number;
}

/**
 * The settler's transactions by nonce: those in flight, and those mined within `keepMinedMs`
 * (at most `keepMined` of them, the newest), so that a node that loses its last blocks can be
 * handed them again. Memory is bounded by `keepMined` plus what is in flight.
 */
export class SentTransactions {
  private readonly byNonce = new Map<number, SentTransaction>();

  constructor(
    private readonly keepMinedMs: number,
    private readonly keepMined: number,
  ) {}

  add(tx: SentTransaction): void {
    this.byNonce.set(tx.nonce, tx);
  }

  get(nonce: number): SentTransaction | undefined {
    return this.byNonce.get(nonce);
  }

  get size(): number {
    return this.byNonce.size;
  }

  nonces(): Set<number> {
    return new Set(this.byNonce.keys());
  }

  /** Those not mined (as far as the last check saw), lowest nonce first. */
  inFlight(): SentTransaction[] {
    return [...this.byNonce.values()].filter((t) => t.minedAt === undefined).sort((a, b) => a.nonce - b.nonce);
  }

  /**
   * Follows the node's mined nonce: below it a transaction is mined (newly so: in `mined`), at or
   * above it one that was mined is in flight again (in `lost`: the node dropped its block).
   */
  follow(minedNonce: number, now: number): { mined: SentTransaction[]; lost: SentTransaction[] } {
    const mined: SentTransaction[] = [];
    const lost: SentTransaction[] = [];
    for (const tx of this.byNonce.values()) {
      if (tx.nonce < minedNonce && tx.minedAt === undefined) {
        tx.minedAt = now;
        mined.push(tx);
      } else if (tx.nonce >= minedNonce && tx.minedAt !== undefined) {
        tx.minedAt = undefined;
        lost.push(tx);
      }
    }
    return { mined, lost };
  }

  /** Forgets mined transactions older than keepMinedMs, and the oldest mined beyond keepMined. */
  evict(now: number): void {
    const mined = [...this.byNonce.values()].filter((t) => t.minedAt !== undefined).sort((a, b) => a.nonce - b.nonce);
    const over = mined.length - this.keepMined;
    for (const [i, tx] of mined.entries()) {
      if (i < over || now - (tx.minedAt as number) > this.keepMinedMs) this.byNonce.delete(tx.nonce);
    }
  }
}
