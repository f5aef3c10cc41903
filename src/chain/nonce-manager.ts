import { TransactionNotFoundError, parseTransaction, type Address, type Hash, type Hex } from 'viem';
import type { ChainPublicClient, ChainWalletClient } from './clients.js';
import { planResend, type ResendPlan } from './nonce-resend-plan.js';
import { refusedAsAlreadyHeld } from './rebroadcast-refusal.js';
import { SentTransactions, type Fees, type SentTransaction } from './sent-transactions.js';

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
  /** How often the node is checked (two eth_getTransactionCount a pass, none while nothing is remembered). */
  checkEveryMs?: number;
  /** Fee increase per replacement, in percent; nodes refuse replacements below +10 %. */
  bumpPercent?: number;
  /** Never offer a maxFeePerGas above this (wei); a transaction that would need more is left pending and reported. */
  maxFeePerGas?: bigint;
  /** How long a mined transaction is remembered, to be handed again to a node that lost its block. */
  keepMinedMs?: number;
  /** At most this many mined transactions are remembered (the newest). */
  keepMined?: number;
  /** The lowest unmined transaction, unmined this long since its last broadcast, is asked for: a node that forgot it is handed it again. */
  askAfterMs?: number;
  /** A nonce the node lost that this process never sent, below one it did, is filled with an empty transaction once the hole is this old. */
  fillAfterMs?: number;
  onReplaced?: (e: { nonce: number; replaced: Hash; by: Hash; maxFeePerGas: bigint }) => void;
  /** The node had lost transactions: those handed to it again (same hashes), and the holes filled with empty transactions. */
  onResent?: (e: { nonces: number[]; hashes: Hash[]; filled: number[] }) => void;
  onError?: (err: unknown) => void;
}

const DEFAULTS = {
  replaceAfterMs: 60_000,
  checkEveryMs: 1_000,
  bumpPercent: 25,
  keepMinedMs: 10 * 60_000,
  keepMined: 256,
  askAfterMs: 3_000,
  fillAfterMs: 15_000,
};
type Settings = typeof DEFAULTS & NonceManagerOptions;
/** How long a replaced hash keeps pointing at its successor after the nonce was mined. */
const FORGET_REPLACED_AFTER_MS = 3_600_000;
const EMPTY_TX_GAS = 21_000n;

/**
 * The one owner of a settler key's nonces in a process: every send with the key (settlement
 * shards, their retries, repayments) takes the next nonce here, one at a time, so no two
 * transactions share one. It signs each transaction itself and remembers it, signed, until its
 * nonce has been mined for `keepMinedMs`. Every `checkEveryMs` it compares the node's nonces
 * with its own (src/chain/nonce-resend-plan.ts): a node that lost transactions (restarted on an
 * older state, dropped blocks, a mempool that forgot them) is handed them again byte for byte,
 * same nonce, same fees, so the same hash, and so a lost settleBatch is mined again without
 * anything recorded by its hash going stale (the contract refuses a repeated batch id, so nothing
 * pays twice). A transaction left unmined past `replaceAfterMs` (fee too low for the market) is
 * replaced by the same transaction with the same nonce and fees raised by `bumpPercent`.
 * A failed broadcast makes it ask the node for the pending nonce again before the next send.
 * Across processes each worker needs its own settler key (docs/scaling.md).
 */
export class NonceManager {
  private next: number | undefined;
  /** The highest mined nonce seen since the last pass that put everything lost back. */
  private minedSeen: number | undefined;
  private holeSince: number | undefined;
  private askedAt = 0;
  private turn: Promise<unknown> = Promise.resolve();
  private checking = false;
  private readonly sent: SentTransactions;
  /** Every replaced hash -> the newest transaction with its nonce, and when that nonce was mined. */
  private readonly successor = new Map<Hash, { hash: Hash; minedAt?: number }>();
  private timer: NodeJS.Timeout | undefined;
  private readonly o: Settings;

  constructor(
    private readonly publicClient: ChainPublicClient,
    private readonly walletClient: ChainWalletClient,
    opts: NonceManagerOptions = {},
  ) {
    this.o = { ...DEFAULTS, ...opts };
    if (this.o.bumpPercent < 10) throw new RangeError('bumpPercent must be at least 10');
    if (walletClient.account.type !== 'local') throw new TypeError('the nonce manager signs itself: it needs a local account');
    this.sent = new SentTransactions(this.o.keepMinedMs, this.o.keepMined);
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
    return this.sent.inFlight().length;
  }

  /** Checks the node every `checkEveryMs` until stop(); a pass still running skips the next tick. */
  start(): void {
    this.timer ??= setInterval(() => {
      if (this.checking) return;
      this.checking = true;
      this.check()
        .catch((err: unknown) => this.o.onError?.(err))
        .finally(() => (this.checking = false));
    }, this.o.checkEveryMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass: follows what was mined, hands the node again what it lost, replaces what is stuck. */
  check(now = Date.now()): Promise<void> {
    return this.inTurn(() => this.checkNow(now));
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.turn.then(work, work);
    this.turn = result.catch(() => undefined);
    return result;
  }

  private highestKnown(): number | undefined {
    const nonces = [...this.sent.nonces()];
    return nonces.length === 0 ? undefined : Math.max(...nonces);
  }

  private async sendNow(request: TxRequest): Promise<Hash> {
    if (this.next === undefined) {
      const pending = await this.publicClient.getTransactionCount({ address: this.address, blockTag: 'pending' });
      // Never below a nonce we hold a transaction for, even one the node lost: the check puts that one back.
      this.next = Math.max(pending, (this.highestKnown() ?? -1) + 1);
    }
    const nonce = this.next;
    try {
      const gas = request.gas ?? (await this.publicClient.estimateGas({ account: this.walletClient.account, to: request.to, data: request.data, value: request.value }));
      const fees = await this.marketFees();
      const { hash, raw } = await this.broadcast(request, nonce, gas, fees);
      this.next = nonce + 1;
      const now = Date.now();
      this.sent.add({ nonce, gas, ...fees, hashes: [hash], raw, sentAt: now, broadcastAt: now });
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
    this.sent.evict(now);
    if (this.sent.size === 0) {
      // Nothing left to hand back: the next send asks the node where to start.
      this.next = undefined;
      this.minedSeen = undefined;
      return;
    }
    const [mined, pending] = await Promise.all([
      this.publicClient.getTransactionCount({ address: this.address, blockTag: 'latest' }),
      this.publicClient.getTransactionCount({ address: this.address, blockTag: 'pending' }),
    ]);
    const { mined: nowMined, lost } = this.sent.follow(mined, now);
    for (const tx of nowMined) for (const h of tx.hashes.slice(0, -1)) this.successor.set(h, { hash: tx.hashes.at(-1) as Hash, minedAt: now });
    for (const tx of lost) for (const h of tx.hashes.slice(0, -1)) this.successor.set(h, { hash: tx.hashes.at(-1) as Hash });

    const next = this.next ?? (this.highestKnown() as number) + 1;
    const forgotten = await this.forgottenAt(mined, now);
    const plan = planResend({ mined, pending }, { next, minedSeen: this.minedSeen ?? mined, known: this.sent.nonces(), ...(forgotten === undefined ? {} : { forgotten }) });
    this.minedSeen = Math.max(this.minedSeen ?? mined, mined);
    if (plan === null) this.holeSince = undefined;
    else if (await this.putBack(plan, now)) this.minedSeen = mined;

    for (const tx of this.sent.inFlight()) {
      if (tx.nonce >= mined && now - tx.sentAt >= this.o.replaceAfterMs) await this.replace(tx, now);
    }
  }

  /** The lowest unmined nonce when it is the node's next to mine, its transaction unmined for askAfterMs and unknown to the node. */
  private async forgottenAt(mined: number, now: number): Promise<number | undefined> {
    const lowest = this.sent.get(mined);
    if (!lowest || lowest.minedAt !== undefined) return undefined;
    if (now - lowest.broadcastAt < this.o.askAfterMs || now - this.askedAt < this.o.askAfterMs) return undefined;
    this.askedAt = now;
    const known = await this.publicClient.getTransaction({ hash: lowest.hashes.at(-1) as Hash }).then(
      () => true,
      (err: unknown) => {
        if (err instanceof TransactionNotFoundError) return false;
        throw err;
      },
    );
    return known ? undefined : mined;
  }

  /** Hands the node again what it lost; true when nothing is left to put back. */
  private async putBack(plan: ResendPlan, now: number): Promise<boolean> {
    const holeSince = plan.fill.length > 0 ? (this.holeSince ?? now) : undefined;
    const fillNow = holeSince !== undefined && now - holeSince >= this.o.fillAfterMs;
    let complete = plan.fill.length === 0 || fillNow;
    let failure: unknown;
    const resent: { nonce: number; hash: Hash }[] = [];
    const filled: number[] = [];
    for (const nonce of [...plan.resend, ...(fillNow ? plan.fill : [])].sort((a, b) => a - b)) {
      const tx = this.sent.get(nonce);
      // While a hole waits to be filled, what sits above it was handed back once already: once is enough.
      if (tx && !fillNow && this.holeSince !== undefined && tx.broadcastAt >= this.holeSince) continue;
      try {
        if (tx) {
          tx.broadcastAt = now;
          resent.push({ nonce, hash: await this.walletClient.sendRawTransaction({ serializedTransaction: tx.raw }) });
        } else {
          await this.fillHole(nonce, now);
          filled.push(nonce);
        }
      } catch (err) {
        if (tx && refusedAsAlreadyHeld(err)) continue;
        failure ??= err;
        complete = false;
      }
    }
    this.holeSince = fillNow ? undefined : holeSince;
    if (this.next !== undefined && plan.next < this.next) this.next = plan.next;
    if (filled.length > 0) {
      this.o.onError?.(new Error(`the node lost settler nonces ${filled.join(', ')} that this process never sent: filled with empty transactions`));
    }
    if (failure !== undefined) this.o.onError?.(failure);
    if (resent.length + filled.length > 0) this.o.onResent?.({ nonces: resent.map((r) => r.nonce), hashes: resent.map((r) => r.hash), filled });
    return complete;
  }

  /** An empty transfer to ourselves at `nonce`, remembered like any other send. */
  private async fillHole(nonce: number, now: number): Promise<void> {
    const fees = await this.marketFees();
    const { hash, raw } = await this.broadcast({ to: this.address, data: '0x', value: 0n }, nonce, EMPTY_TX_GAS, fees);
    this.sent.add({ nonce, gas: EMPTY_TX_GAS, ...fees, hashes: [hash], raw, sentAt: now, broadcastAt: now });
  }

  private async replace(tx: SentTransaction, now: number): Promise<void> {
    const market = await this.marketFees();
    const maxPriorityFeePerGas = max(this.bump(tx.maxPriorityFeePerGas), market.maxPriorityFeePerGas);
    const maxFeePerGas = max(this.bump(tx.maxFeePerGas), market.maxFeePerGas, maxPriorityFeePerGas);
    const replaced = tx.hashes.at(-1) as Hash;
    if (this.o.maxFeePerGas !== undefined && maxFeePerGas > this.o.maxFeePerGas) {
      this.o.onError?.(new Error(`transaction ${replaced} (nonce ${tx.nonce}) is stuck and its replacement would exceed maxFeePerGas`));
      return;
    }
    const signed = parseTransaction(tx.raw);
    let sent: { hash: Hash; raw: Hex };
    try {
      sent = await this.broadcast({ to: signed.to as Address, data: signed.data ?? '0x', value: signed.value ?? 0n }, tx.nonce, tx.gas, { maxFeePerGas, maxPriorityFeePerGas });
    } catch (err) {
      // Most often the nonce was mined meanwhile ("nonce too low"): the next pass sees it mined.
      this.o.onError?.(err);
      return;
    }
    tx.hashes.push(sent.hash);
    for (const h of tx.hashes.slice(0, -1)) this.successor.set(h, { hash: sent.hash });
    Object.assign(tx, { raw: sent.raw, maxFeePerGas, maxPriorityFeePerGas, sentAt: now, broadcastAt: now });
    this.o.onReplaced?.({ nonce: tx.nonce, replaced, by: sent.hash, maxFeePerGas });
  }

  private bump(fee: bigint): bigint {
    return fee + (fee * BigInt(this.o.bumpPercent) + 99n) / 100n;
  }

  private async marketFees(): Promise<Fees> {
    const { maxFeePerGas, maxPriorityFeePerGas } = await this.publicClient.estimateFeesPerGas();
    return { maxFeePerGas, maxPriorityFeePerGas };
  }

  /** Signs here (deterministic signatures: equal fields, equal bytes, equal hash) and hands the node the bytes. */
  private async broadcast(request: TxRequest, nonce: number, gas: bigint, fees: Fees): Promise<{ hash: Hash; raw: Hex }> {
    const account = this.walletClient.account;
    const chain = this.walletClient.chain;
    if (!account.signTransaction) throw new TypeError('the settler account cannot sign transactions itself');
    const raw = await account.signTransaction(
      { chainId: chain.id, type: 'eip1559', to: request.to, data: request.data, value: request.value ?? 0n, gas, nonce, ...fees },
      { serializer: chain.serializers?.transaction },
    );
    const hash = await this.walletClient.sendRawTransaction({ serializedTransaction: raw });
    return { hash, raw };
  }
}

function max(...values: bigint[]): bigint {
  return values.reduce((a, b) => (b > a ? b : a));
}
