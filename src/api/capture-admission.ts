import type { Context, Next } from 'koa';
import { ApiError } from '../domain/errors.js';
import type { ApiMetrics } from '../observability/metrics.js';
import type { Collections } from '../store/collections.js';
import { settlementBacklog } from '../store/settlement-queue.js';

export interface AdmissionLimits {
  /** Captures this process works on at once. */
  maxInFlight: number;
  /** Accepted payments waiting for settlement across all shards. */
  maxBacklog: number;
  shards: number;
}

const BACKLOG_REFRESH_MS = 1_000;

/**
 * Load shedding for captures: past either limit a capture is answered 503 UNAVAILABLE with
 * Retry-After at once, before any store work, instead of waiting in a queue whose delay grows
 * without bound. In flight is this process's own count; the backlog is what the settlement shards
 * last reported (refreshed in the background at most once a second, never on the request's path).
 */
export class CaptureAdmission {
  private inFlight = 0;
  private backlog = 0;
  private readAt = 0;
  private reading = false;

  constructor(
    private readonly c: Collections,
    private readonly limits: AdmissionLimits,
    private readonly metrics?: ApiMetrics,
    private readonly nowMs: () => number = Date.now,
  ) {}

  middleware() {
    return async (ctx: Context, next: Next) => {
      this.refreshBacklog();
      if (this.inFlight >= this.limits.maxInFlight) throw this.shed('in_flight', 1);
      if (this.backlog > this.limits.maxBacklog) throw this.shed('backlog', 2);
      this.inFlight++;
      try {
        await next();
      } finally {
        this.inFlight--;
      }
    };
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
