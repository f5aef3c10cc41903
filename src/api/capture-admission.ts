import type { Context, Next } from 'koa';
import { ApiError } from '../domain/errors.js';
import type { ApiMetrics } from '../observability/metrics.js';
import type { Collections } from '../store/collections.js';
import { SettlementBoardReader } from '../payments/settlement-board.js';

export interface AdmissionLimits {
  /** The most captures this process works on at once. */
  maxInFlight: number;
  /** The capture latency (p90 over a second) above which the in-flight limit shrinks, if captures queued for it. */
  targetLatencyMs: number;
  /** How long a capture may wait for a slot before it is shed; 0 sheds at once. */
  maxQueueMs?: number;
  /**
   * How long a capture may wait while this process is shedding (a capture found no slot in time
   * within the last OVERLOAD_MEMORY_MS): in a sustained overload a freed slot is taken within
   * milliseconds by some waiter anyway, so a long wait adds latency and no throughput. At most
   * maxQueueMs, which is also the default (no distinction).
   */
  overloadQueueMs?: number;
  /** Milliseconds of the best recent throughput the in-flight limit always allows (Little's law); default targetLatencyMs. */
  throughputAllowanceMs?: number;
  /**
   * The share of the in-flight limit in force that one merchant's captures may hold, in flight and
   * waiting together (at least one slot); past it that merchant's captures are shed at once, others'
   * not. 1 (the default here) caps nothing; the API passes CAPTURE_MERCHANT_SHARE.
   */
  merchantShare?: number;
  /** Accepted payments waiting for settlement across all shards. */
  maxBacklog: number;
  shards: number;
}

const BACKLOG_REFRESH_MS = 1_000;
const ADJUST_EVERY_MS = 1_000;
/**
 * The in-flight limit never shrinks below this. It only shrinks while captures fill it and are slow
 * (an overload), so at normal load the limit stays near its maximum and a stall does not meet it.
 */
const MIN_LIMIT = 8;
/**
 * Seconds of per-second throughput the floor remembers. The floor follows the best of them: with
 * the current second's throughput instead, an overload whose captures run slower than the allowance
 * (CPU shared with the shedding itself) spiralled down, fewer slots finishing fewer captures a
 * second and so lowering the floor again, until the 4x level admitted 8 / 140 ms = 57 captures/s
 * while the shards could settle half as many again (docs/scaling.md, fourteenth round).
 */
const THROUGHPUT_MEMORY_SECONDS = 30;
/** After a capture is shed for want of a slot, waits are overloadQueueMs for this long. */
const OVERLOAD_MEMORY_MS = 1_000;

/**
 * How much of the limit a slow, saturated second keeps: target / p90 (the share of today's
 * concurrency that would have met the target), at least half and at most three quarters. At an
 * overload's start the limit is the maximum and captures take several times the target; a quarter a
 * second took five seconds to come down, each with captures taking ~1 s (the 4x level's first
 * seconds, bench `captureMaxMsBySecond`).
 */
export function shrinkFactor(p90Ms: number, targetMs: number): number {
  return Math.max(0.5, Math.min(0.75, targetMs / p90Ms));
}

/** Refusals this admission answered for overload (counted in x402_captures_shed_total, not as capture outcomes). */
const SHED = new WeakSet<ApiError>();

/** True for a refusal CaptureAdmission shed (the route's outcome counter leaves it to x402_captures_shed_total). */
export function isShedRefusal(err: unknown): boolean {
  return err instanceof ApiError && SHED.has(err);
}

type ShedCause = 'in_flight' | 'backlog' | 'merchant_share';

/** The merchant a capture is admitted for: the route's authentication put it in ctx.state. */
const merchantIdOf = (ctx: Context): string | undefined => (ctx.state as { merchant?: { merchantId?: string } } | undefined)?.merchant?.merchantId;

interface Waiter {
  admit(): void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Load shedding for captures. Past the settlement backlog limit a capture is answered 503
 * UNAVAILABLE with Retry-After at once, before any store work. Past the in-flight limit it waits
 * for a slot, in order, for at most maxQueueMs (the queue holds at most as many captures as the
 * limit), and is shed only if none frees in time: shedding follows work that really queues, and a
 * burst shorter than the wait is absorbed. Once a capture has found no slot in time, the burst was
 * an overload: for the next OVERLOAD_MEMORY_MS new waiters wait at most overloadQueueMs (CoDel's
 * and adaptive queues' idea), since a freed slot is taken within milliseconds by some waiter anyway
 * and a long wait would only add to every admitted capture's latency. The in-flight limit adapts
 * (additive increase, multiplicative decrease): each second, if the slowest tenth of the captures
 * that finished took longer than targetLatencyMs *and* captures filled the limit or queued for it,
 * it shrinks by a quarter (by up to a half when they took more than the target by far: shrinkFactor),
 * but never below what the best throughput of the last THROUGHPUT_MEMORY_SECONDS needs (captures
 * finished per second x throughputAllowanceMs, by default the target latency) nor below MIN_LIMIT;
 * slow captures at low concurrency (a co-located batch end, a GC pause) leave it alone, since fewer
 * slots would not make them faster. Whenever captures
 * were fast it grows by a quarter, up to maxInFlight, so a limit cut during an overload is back
 * within seconds once the load is normal, used or not. The backlog is what the settlement shards
 * last reported (read in the background at most once a second, never on the request's path, from
 * the shards' board that status polls read too: one store command serves both).
 *
 * A capture takes its slot in the route, after its merchant is authenticated and its whole body was
 * read (issue 42): a slow or never-finished body costs a connection, never a slot. One merchant's
 * captures hold at most merchantShare of the limit in force, in flight and waiting together, so one
 * key (or a few) cannot take every slot. In front of the app, earlyRefusal() only refuses, cheaply
 * and without taking anything, a capture that would find no slot anyway.
 */
export class CaptureAdmission {
  private inFlight = 0;
  private limit: number;
  private peak = 0;
  private queuedThisWindow = 0;
  private readonly waiters: Waiter[] = [];
  /** Each merchant's captures in flight or waiting for a slot (merchants with none are absent). */
  private readonly heldByMerchant = new Map<string, number>();
  /** Until when new waiters get the overload wait (a capture found no slot in time shortly before). */
  private overloadedUntil = 0;
  private latencies: number[] = [];
  /** Captures finished per second in the last THROUGHPUT_MEMORY_SECONDS adjustments, oldest first. */
  private recentThroughput: number[] = [];
  private adjustedAt: number;
  private backlog = 0;
  private readAt = 0;
  private reading = false;

  constructor(
    private readonly c: Collections,
    private readonly limits: AdmissionLimits,
    private readonly metrics?: ApiMetrics,
    private readonly nowMs: () => number = Date.now,
    /** The shards' board, shared with status polls so one read serves both. */
    private readonly board = new SettlementBoardReader(c, limits.shards),
  ) {
    this.limit = limits.maxInFlight;
    this.adjustedAt = nowMs();
  }

  /** The in-flight limit in force (for tests and metrics). */
  get currentLimit(): number {
    return this.limit;
  }

  /** Captures holding a slot now (x402_captures_in_flight). */
  get inFlightCount(): number {
    return this.inFlight;
  }

  /** The most captures one merchant may hold, in flight and waiting together, under the limit in force. */
  get merchantLimit(): number {
    const share = this.limits.merchantShare ?? 1;
    return share >= 1 ? Infinity : Math.max(1, Math.ceil(this.limit * share));
  }

  /** One merchant's captures in flight or waiting now. */
  heldBy(merchantId: string): number {
    return this.heldByMerchant.get(merchantId) ?? 0;
  }

  /**
   * A slot for one capture (of `merchantId`, when known: its share is enforced): resolves with its
   * release once the capture may run (at once, or after waiting in order for a freed slot), or
   * rejects with the 503 it gets instead (counted as shed). Past the backlog limit, past the
   * merchant's share, or with no free slot and no room or time to wait, it rejects before any
   * await. Release once, when the capture has its answer (later calls do nothing).
   */
  async acquire(merchantId?: string): Promise<() => void> {
    this.refreshBacklog();
    this.adjust();
    if (this.backlog > this.limits.maxBacklog) throw this.shed('backlog', ApiError.unavailable(2));
    const unhold = merchantId === undefined ? undefined : this.hold(merchantId);
    try {
      if (this.inFlight < this.limit && this.waiters.length === 0) this.inFlight++;
      else await this.waitForSlot();
    } catch (err) {
      unhold?.();
      throw err;
    }
    this.peak = Math.max(this.peak, this.inFlight);
    this.metrics?.capturesInFlight.set(this.inFlight);
    const started = this.nowMs();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      unhold?.();
      this.latencies.push(this.nowMs() - started);
      this.admitWaiters();
      this.metrics?.capturesInFlight.set(this.inFlight);
    };
  }

  /**
   * The refusal for a capture that has just arrived, before the app reads it (src/api/early-shed.ts),
   * or null to let it on to authentication, its body and the route's admission. It takes nothing: a
   * capture is refused here only when the route would refuse it too, past the backlog limit, or with
   * every slot taken while no capture may wait (no queue time, the queue full) or the process is
   * shedding (a capture found no slot in time within the last second: under a standing overload a
   * freed slot goes to a capture already waiting, so a newcomer would only be refused later, at more
   * CPU). With a slot free, or a burst's queue still open, it is left to the route.
   */
  earlyRefusal(): ApiError | null {
    this.refreshBacklog();
    this.adjust();
    if (this.backlog > this.limits.maxBacklog) return this.shed('backlog', ApiError.unavailable(2));
    if (this.inFlight < this.limit) return null;
    const shedding = this.nowMs() < this.overloadedUntil;
    if (shedding || this.queueWaitMs() <= 0 || this.waiters.length >= this.limit) return this.shed('in_flight', ApiError.unavailable(1));
    return null;
  }

  /**
   * Route middleware: runs the capture in a slot. Mount it after the merchant's authentication and
   * after the whole body was read, so neither a slow client nor an unauthenticated one holds a slot.
   */
  middleware(merchantOf: (ctx: Context) => string | undefined = merchantIdOf) {
    return async (ctx: Context, next: Next) => {
      const release = await this.acquire(merchantOf(ctx));
      try {
        await next();
      } finally {
        release();
      }
    };
  }

  /** Counts a capture against its merchant's share, or sheds it when the share is taken; returns the uncount. */
  private hold(merchantId: string): () => void {
    const held = this.heldBy(merchantId);
    const cap = this.merchantLimit;
    if (held >= cap) throw this.shed('merchant_share', ApiError.merchantCapturesBusy(cap, 1));
    this.heldByMerchant.set(merchantId, held + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = this.heldBy(merchantId) - 1;
      if (left > 0) this.heldByMerchant.set(merchantId, left);
      else this.heldByMerchant.delete(merchantId);
    };
  }

  /** Resolves once a slot is handed over (already counted in inFlight), or sheds: at once when none may wait, else when none frees in time. */
  private waitForSlot(): Promise<void> {
    const waitMs = this.queueWaitMs();
    if (waitMs <= 0 || this.waiters.length >= this.limit) return Promise.reject(this.shedForSlot());
    this.queuedThisWindow++;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        admit: resolve,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(this.shedForSlot());
        }, waitMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** The full wait unless a capture was shed for want of a slot within OVERLOAD_MEMORY_MS; then the overload wait. */
  private queueWaitMs(): number {
    const maxQueueMs = this.limits.maxQueueMs ?? 0;
    const overloaded = this.nowMs() < this.overloadedUntil;
    return overloaded ? Math.min(maxQueueMs, this.limits.overloadQueueMs ?? maxQueueMs) : maxQueueMs;
  }

  private shedForSlot(): ApiError {
    this.overloadedUntil = this.nowMs() + OVERLOAD_MEMORY_MS;
    return this.shed('in_flight', ApiError.unavailable(1));
  }

  /** Hands freed slots to waiting captures, oldest first; the slot is counted before the waiter runs, so no newcomer takes it. */
  private admitWaiters(): void {
    while (this.inFlight < this.limit && this.waiters.length > 0) {
      const waiter = this.waiters.shift()!;
      clearTimeout(waiter.timer);
      this.inFlight++;
      waiter.admit();
    }
  }

  private adjust(): void {
    const now = this.nowMs();
    if (now - this.adjustedAt < ADJUST_EVERY_MS) return;
    const windowStart = this.adjustedAt;
    this.adjustedAt = now;
    const sorted = this.latencies.sort((a, b) => a - b);
    const p90 = sorted.length > 0 ? (sorted[Math.floor(sorted.length * 0.9)] as number) : 0;
    const saturated = this.peak >= this.limit * 0.8 || this.queuedThisWindow > 0;
    this.recentThroughput.push((sorted.length * 1000) / Math.max(ADJUST_EVERY_MS, now - windowStart));
    if (this.recentThroughput.length > THROUGHPUT_MEMORY_SECONDS) this.recentThroughput.shift();
    const best = Math.max(...this.recentThroughput);
    const allowanceMs = this.limits.throughputAllowanceMs ?? this.limits.targetLatencyMs;
    const floor = Math.min(this.limits.maxInFlight, Math.max(MIN_LIMIT, Math.ceil((best * allowanceMs) / 1000)));
    if (p90 > this.limits.targetLatencyMs && saturated) this.limit = Math.max(floor, Math.floor(this.limit * shrinkFactor(p90, this.limits.targetLatencyMs)));
    else if (p90 <= this.limits.targetLatencyMs) this.limit = Math.min(this.limits.maxInFlight, this.limit + Math.max(2, Math.ceil(this.limit / 4)));
    this.latencies = [];
    this.peak = this.inFlight;
    this.queuedThisWindow = 0;
  }

  private shed(cause: ShedCause, refusal: ApiError): ApiError {
    this.metrics?.capturesShed.inc({ cause });
    SHED.add(refusal);
    return refusal;
  }

  private refreshBacklog(): void {
    const now = this.nowMs();
    if (this.reading || now - this.readAt < BACKLOG_REFRESH_MS) return;
    this.reading = true;
    this.readAt = now;
    this.board
      .backlog(now, BACKLOG_REFRESH_MS)
      .then((backlog) => {
        this.backlog = backlog;
      })
      .catch(() => undefined) // a store that cannot answer fails the capture itself, with its own 503
      .finally(() => {
        this.reading = false;
      });
  }
}
