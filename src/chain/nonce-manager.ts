import type { Address, Hash, Hex } from 'viem';
import type { ChainPublicClient, ChainWalletClient } from './clients.js';

/** A transaction to send with the settler key; gas is estimated when absent. */
export interface TxRequest {
  to: Address;
  data: Hex;
  gas?: bigint;
  value?: bigint;
}

export interface NonceManagerOptions {
  /** A transaction still unmined this long after its last broadcast is re-sent with the same nonce and higher fees. */
  replaceAfterMs?: number;
  /** How often in-flight transactions are checked. */
  checkEveryMs?: number;
  /** Fee increase per replacement, in percent; nodes refuse replacements below +10 %. */
  bumpPercent?: number;
  /** Never offer a maxFeePerGas above this (wei); a transaction that would need more is left pending and reported. */
  maxFeePerGas?: bigint;
  onReplaced?: (e: { nonce: number; replaced: Hash; by: Hash; maxFeePerGas: bigint }) => void;
  onError?: (err: unknown) => void;
}

interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

interface InFlight extends Fees {
  request: TxRequest;
  gas: bigint;
  hashes: Hash[];
  sentAt: number;
}

const DEFAULTS = { replaceAfterMs: 60_000, checkEveryMs: 5_000, bumpPercent: 25 };
/** How long a replaced hash keeps pointing at its successor after the nonce was mined. */
const FORGET_REPLACED_AFTER_MS = 3_600_000;

/**
 * The one owner of a settler key's nonces in a process: every send with the key (settlement
 * shards, their retries, repayments) takes the next nonce here, one at a time, so no two
 * transactions share one. It remembers what it sent until the nonce is mined; a transaction left
 * unmined past `replaceAfterMs` (fee too low for the market) is replaced by the same transaction
 * with the same nonce and fees raised by `bumpPercent`, so nothing queues behind it forever.
 * A failed broadcast makes it ask the node for the pending nonce again before the next send.
 * Across processes each worker needs its own settler key (docs/scaling.md).
 */
export class NonceManager {
  private next: number | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  private readonly inFlight = new Map<number, InFlight>();
  /** Every replaced hash -> the newest transaction with its nonce, and when that nonce was mined. */
  private readonly successor = new Map<Hash, { hash: Hash; minedAt?: number }>();
  private timer: NodeJS.Timeout | undefined;
  private readonly o: Required<Pick<NonceManagerOptions, 'replaceAfterMs' | 'checkEveryMs' | 'bumpPercent'>> & NonceManagerOptions;

  constructor(
    private readonly publicClient: ChainPublicClient,
    private readonly walletClient: ChainWalletClient,
    opts: NonceManagerOptions = {},
  ) {
    this.o = { ...DEFAULTS, ...opts };
    if (this.o.bumpPercent < 10) throw new RangeError('bumpPercent must be at least 10');
  }

  get address(): Address {
    return this.walletClient.account.address;
  }

  /** Broadcasts `request` with the next nonce; resolves with its hash once the node accepted it. */
  send(request: TxRequest): Promise<Hash> {
    return this.inTurn(() => this.sendNow(request));
  }

  /** The newest hash of the transaction first broadcast as `hash` (the same one unless replaced). */
  currentHash(hash: Hash): Hash {
    return this.successor.get(hash)?.hash ?? hash;
  }

  /** The nonce the next send takes, once known (undefined before the first send and after a failed one). */
  get nextNonce(): number | undefined {
    return this.next;
  }

  /** Transactions sent and not yet mined. */
  get pending(): number {
    return this.inFlight.size;
  }

  /** Checks in-flight transactions every `checkEveryMs` until stop(). */
  start(): void {
    this.timer ??= setInterval(() => void this.check().catch((err: unknown) => this.o.onError?.(err)), this.o.checkEveryMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass: forgets what was mined, replaces what is stuck. */
  check(now = Date.now()): Promise<void> {
    return this.inTurn(() => this.checkNow(now));
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.turn.then(work, work);
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async sendNow(request: TxRequest): Promise<Hash> {
    this.next ??= await this.publicClient.getTransactionCount({ address: this.address, blockTag: 'pending' });
    const nonce = this.next;
    try {
      const gas = request.gas ?? (await this.publicClient.estimateGas({ account: this.walletClient.account, to: request.to, data: request.data, value: request.value }));
      const fees = await this.marketFees();
      const hash = await this.broadcast(request, nonce, gas, fees);
      this.next = nonce + 1;
      this.inFlight.set(nonce, { request, gas, ...fees, hashes: [hash], sentAt: Date.now() });
      return hash;
    } catch (err) {
      // Whether the node took this nonce is unknown: ask it again before the next send.
      this.next = undefined;
      throw err;
    }
  }

  private async checkNow(now: number): Promise<void> {
    for (const [hash, s] of this.successor) {
      if (s.minedAt !== undefined && now - s.minedAt > FORGET_REPLACED_AFTER_MS) this.successor.delete(hash);
    }
    if (this.inFlight.size === 0) return;
    const mined = await this.publicClient.getTransactionCount({ address: this.address, blockTag: 'latest' });
    for (const [nonce, tx] of [...this.inFlight].sort(([a], [b]) => a - b)) {
      if (nonce < mined) {
        this.inFlight.delete(nonce);
        for (const h of tx.hashes.slice(0, -1)) this.successor.set(h, { hash: tx.hashes.at(-1) as Hash, minedAt: now });
      } else if (now - tx.sentAt >= this.o.replaceAfterMs) {
        await this.replace(nonce, tx, now);
      }
    }
  }

  private async replace(nonce: number, tx: InFlight, now: number): Promise<void> {
    const market = await this.marketFees();
    const maxPriorityFeePerGas = max(this.bump(tx.maxPriorityFeePerGas), market.maxPriorityFeePerGas);
    const maxFeePerGas = max(this.bump(tx.maxFeePerGas), market.maxFeePerGas, maxPriorityFeePerGas);
    if (this.o.maxFeePerGas !== undefined && maxFeePerGas > this.o.maxFeePerGas) {
      this.o.onError?.(new Error(`transaction ${tx.hashes.at(-1)} (nonce ${nonce}) is stuck and its replacement would exceed maxFeePerGas`));
      return;
    }
    let hash: Hash;
    try {
      hash = await this.broadcast(tx.request, nonce, tx.gas, { maxFeePerGas, maxPriorityFeePerGas });
    } catch (err) {
      // Most often the nonce was mined meanwhile ("nonce too low"): the next pass forgets it.
      this.o.onError?.(err);
      return;
    }
    const replaced = tx.hashes.at(-1) as Hash;
    tx.hashes.push(hash);
    for (const h of tx.hashes.slice(0, -1)) this.successor.set(h, { hash });
    Object.assign(tx, { maxFeePerGas, maxPriorityFeePerGas, sentAt: now });
    this.o.onReplaced?.({ nonce, replaced, by: hash, maxFeePerGas });
  }

  private bump(fee: bigint): bigint {
    return fee + (fee * BigInt(this.o.bumpPercent) + 99n) / 100n;
  }

  private async marketFees(): Promise<Fees> {
    const { maxFeePerGas, maxPriorityFeePerGas } = await this.publicClient.estimateFeesPerGas();
    return { maxFeePerGas, maxPriorityFeePerGas };
  }

  private broadcast(request: TxRequest, nonce: number, gas: bigint, fees: Fees): Promise<Hash> {
    return this.walletClient.sendTransaction({
      account: this.walletClient.account,
      chain: this.walletClient.chain,
      to: request.to,
      data: request.data,
      value: request.value,
      gas,
      nonce,
      ...fees,
    });
  }
}

function max(...values: bigint[]): bigint {
  return values.reduce((a, b) => (b > a ? b : a));
}
