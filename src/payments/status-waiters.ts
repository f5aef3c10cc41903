import type { PaymentStatus, Receipt } from '../domain/payment.js';

/** Where the waiters learn of settlement: one shared refresh per tick, then a free look per payment. */
export interface WaitSource {
  /** Brings the process's view of the shards' board up to date (at most one store read per tick, whatever the waiters). */
  refresh(nowMs: number): Promise<void>;
  /** A token that changes when the payment's answer may have changed; no store read. */
  signal(paymentId: string): string;
}

export interface WaitRequest {
  paymentId: string;
  /** The status the caller saw; the wait ends when the payment shows another. */
  from: PaymentStatus;
  waitMs: number;
  /** The payment's current answer (the status poll's own read, so its scope checks hold). */
  current(): Promise<Receipt>;
  /** Aborted when the client goes away: the waiter is released at once. */
  abort?: AbortSignal;
}

export interface WaitersOptions {
  /** Waiters one process holds; a request past this is not held (the caller answers at once). */
  maxWaiters: number;
  /** How often the shared refresh runs while anyone waits. */
  tickMs: number;
  /** A waiter whose signal did not move is still re-read this often (a batch written by an older worker, a claim found late). */
  recheckMs: number;
  nowMs(): number;
  onError?(err: unknown): void;
}

interface Waiter {
  req: WaitRequest;
  /** Undefined until the first tick: the view may have moved between the caller's read and the registration. */
  signal: string | undefined;
  checkedAtMs: number;
  checking: boolean;
  finish(answer: Receipt | undefined): void;
}

/**
 * Long polls of payment status in one API process. Waiters never read the store on their own:
 * one timer, running only while someone waits, refreshes the shared view every tickMs (the same
 * board read status polls use) and re-reads a payment's answer only when its signal moved (a batch
 * claimed it, its batch's record changed, it was voided) or every recheckMs. A wait resolves with
 * the new receipt when the status differs from `from`, or with undefined on timeout or abort (the
 * caller answers the current status).
 */
export class PaymentStatusWaiters {
  private readonly waiters = new Set<Waiter>();
  /** Whether the tick chain runs (a tick pending or under way); it ends at the first tick that finds no waiter. */
  private ticking = false;

  constructor(
    private readonly source: WaitSource,
    private readonly opts: WaitersOptions,
  ) {}

  get size(): number {
    return this.waiters.size;
  }

  /** The wait, or null when the process already holds maxWaiters (or the client has gone). */
  wait(req: WaitRequest): Promise<Receipt | undefined> | null {
    if (this.waiters.size >= this.opts.maxWaiters || req.abort?.aborted) return null;
    return new Promise<Receipt | undefined>((resolve) => {
      const onAbort = () => waiter.finish(undefined);
      const timeout = setTimeout(() => waiter.finish(undefined), req.waitMs);
      const waiter: Waiter = {
        req,
        signal: undefined,
        checkedAtMs: this.opts.nowMs(),
        checking: false,
        finish: (answer) => {
          if (!this.waiters.delete(waiter)) return;
          clearTimeout(timeout);
          req.abort?.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      };
      this.waiters.add(waiter);
      req.abort?.addEventListener('abort', onAbort, { once: true });
      if (!this.ticking) {
        this.ticking = true;
        this.nextTick();
      }
    });
  }

  /** Ends every wait (with undefined), e.g. when the process stops. */
  releaseAll(): void {
    for (const w of [...this.waiters]) w.finish(undefined);
  }

  private nextTick(): void {
    setTimeout(() => void this.tick(), this.opts.tickMs).unref();
  }

  private async tick(): Promise<void> {
    if (this.waiters.size === 0) {
      this.ticking = false;
      return;
    }
    const now = this.opts.nowMs();
    try {
      await this.source.refresh(now);
    } catch (err) {
      this.opts.onError?.(err); // the store is away: the waits run on, and end at their timeouts
    }
    for (const w of this.waiters) {
      const signal = this.source.signal(w.req.paymentId);
      if (w.checking || (signal === w.signal && now - w.checkedAtMs < this.opts.recheckMs)) continue;
      w.signal = signal;
      w.checkedAtMs = now;
      w.checking = true;
      void this.check(w);
    }
    this.nextTick();
  }

  private async check(w: Waiter): Promise<void> {
    try {
      const receipt = await w.req.current();
      if (receipt.status !== w.req.from) w.finish(receipt);
    } catch (err) {
      this.opts.onError?.(err);
      w.finish(undefined); // the caller's own read answers (or reports) it
    } finally {
      w.checking = false;
    }
  }
}
