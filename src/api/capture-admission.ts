import type { Context, Next } from 'koa';
import { ApiError } from '../domain/errors.js';
import type { ApiMetrics } from '../observability/metrics.js';
import type { Collections } from '../store/collections.js';
import { settlementBacklog } from '../store/settlement-queue.js';

export interface AdmissionLimits {
  /** The most captures this process works on at once. */
  maxInFlight: number;
  /** The capture latency (p90 over a second) above which the in-flight limit shrinks. */
  targetLatencyMs: number;
  /** Accepted payments waiting for settlement across all shards. */
  maxBacklog: number;
  shards: number;
}

const BACKLOG_REFRESH_MS = 1_000;
const ADJUST_EVERY_MS = 1_000;
const MIN_LIMIT = 4;

/**
 * Load shedding for captures: past the in-flight limit or the settlement backlog limit a capture is
 * answered 503 UNAVAILABLE with Retry-After at once, before any store work, instead of waiting in a
 * queue whose delay grows without bound. The in-flight limit adapts (additive increase,
 * multiplicative decrease): each second, if the slowest tenth of the captures that finished took
 * longer than targetLatencyMs, it shrinks by a quarter; if captures used most of it and were fast,
 * it grows, up to maxInFlight. So admitted captures keep answering near the target whatever the
 * store's speed. The backlog is what the settlement shards last reported (read in the background
 * at most once a second, never on the request's path).
 */
export class CaptureAdmission {
  private inFlight = 0;
  private limit: number;
  private peak = 0;
  private latencies: number[] = [];
  private adjustedAt: number;
  private backlog = 0;
  private readAt = 0;
  private reading = false;

  constructor(
    private readonly c: Collections,
    private readonly limits: AdmissionLimits,
    private readonly metrics?: ApiMetrics,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.limit = limits.maxInFlight;
    this.adjustedAt = nowMs();
  }

  /** The in-flight limit in force (for tests and metrics). */
  get currentLimit(): number {
    return this.limit;
  }

  middleware() {
    return async (ctx: Context, next: Next) => {
      this.refreshBacklog();
      this.adjust();
      if (this.inFlight >= this.limit) throw this.shed('in_flight', 1);
      if (this.backlog > this.limits.maxBacklog) throw this.shed('backlog', 2);
      this.inFlight++;
      this.peak = Math.max(this.peak, this.inFlight);
      const started = this.nowMs();
      try {
        await next();
      } finally {
        this.inFlight--;
        this.latencies.push(this.nowMs() - started);
      }
    };
  }

  private adjust(): void {
    const now = this.nowMs();
    if (now - this.adjustedAt < ADJUST_EVERY_MS) return;
    this.adjustedAt = now;
    const sorted = this.latencies.sort((a, b) => a - b);
    const p90 = sorted.length > 0 ? (sorted[Math.floor(sorted.length * 0.9)] as number) : 0;
    if (p90 > this.limits.targetLatencyMs) this.limit = Math.max(MIN_LIMIT, Math.floor(this.limit * 0.75));
    else if (this.peak >= this.limit * 0.8) this.limit = Math.min(this.limits.maxInFlight, this.limit + Math.max(1, Math.floor(this.limit / 10)));
    this.latencies = [];
    this.peak = this.inFlight;
  }

  private shed(cause: 'in_flight' | 'backlog', retryAfterSeconds: number): ApiError {
    this.metrics?.capturesShed.inc({ cause });
    return ApiError.unavailable(retryAfterSeconds);
  }

  private refreshBacklog(): void {
    const now = this.nowMs();
    if (this.reading || now - this.readAt < BACKLOG_REFRESH_MS) return;
    this.reading = true;
    this.readAt = now;
    settlementBacklog(this.c, this.limits.shards, new Date(now))
      .then((n) => {
        this.backlog = n;
      })
      .catch(() => undefined) // a store that cannot answer fails the capture itself, with its own 503
      .finally(() => {
        this.reading = false;
      });
  }
}
