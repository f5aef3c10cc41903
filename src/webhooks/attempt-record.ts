import type { DeliveryAttempt } from '../store/webhook-deliveries.js';

/** The retry policy of the delivery activity, as Temporal applies it. */
export interface AttemptRetry {
  initialMs: number;
  coefficient: number;
  maxMs: number;
  /** When Temporal stops retrying (the activity's schedule-to-close deadline), epoch ms. */
  deadlineMs?: number;
}

export interface AttemptFacts {
  /** Temporal's attempt number, 1 for the first. */
  attempt: number;
  at: Date;
  latencyMs: number;
  /** What the endpoint answered, when it answered. */
  statusCode?: number;
  error?: string;
  delivered: boolean;
  /** Refused before sending (URL or address not allowed, no active secret): never retried. */
  refused: boolean;
  retry?: AttemptRetry;
}

const MAX_ERROR_CHARS = 200;

/** What the delivery log keeps of one attempt, including when Temporal will try again (Temporal's own backoff). */
export function attemptRecord(f: AttemptFacts): DeliveryAttempt {
  const base = {
    attempts: f.attempt,
    lastAttemptAt: f.at,
    lastStatusCode: f.statusCode,
    lastLatencyMs: Math.round(f.latencyMs),
    lastError: f.error === undefined ? undefined : f.error.slice(0, MAX_ERROR_CHARS),
  };
  if (f.delivered) return { ...base, outcome: 'delivered', nextRetryAt: undefined };
  if (f.refused || !f.retry) return { ...base, outcome: f.refused ? 'failed' : 'pending', nextRetryAt: undefined };
  const waitMs = Math.min(f.retry.initialMs * f.retry.coefficient ** (f.attempt - 1), f.retry.maxMs);
  const next = f.at.getTime() + waitMs;
  if (f.retry.deadlineMs !== undefined && next >= f.retry.deadlineMs) return { ...base, outcome: 'failed', nextRetryAt: undefined };
  return { ...base, outcome: 'pending', nextRetryAt: new Date(next) };
}
