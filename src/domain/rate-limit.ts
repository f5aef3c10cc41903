/**
 * Generic cell rate algorithm: a token bucket kept as one number, the theoretical arrival time
 * (TAT). `perMinute` sets the sustained rate and `burst` how many requests may arrive at once.
 */
export interface RatePolicy {
  perMinute: number;
  burst: number;
}

export interface RateDecision {
  allowed: boolean;
  newTat: number;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds to wait before retrying; 0 when allowed. */
  retryAfterSeconds: number;
}

export function gcraDecide(tat: number | null, nowMs: number, policy: RatePolicy): RateDecision {
  const interval = 60_000 / policy.perMinute;
  const tolerance = interval * (policy.burst - 1);
  const base = Math.max(tat ?? nowMs, nowMs);
  const newTat = base + interval;
  const allowed = newTat - nowMs <= tolerance + interval;
  const effectiveTat = allowed ? newTat : base;
  const remaining = Math.max(0, Math.floor((tolerance + interval - (effectiveTat - nowMs)) / interval));
  return {
    allowed,
    newTat: effectiveTat,
    limit: policy.burst,
    remaining,
    resetSeconds: Math.max(0, Math.ceil((effectiveTat - nowMs) / 1000)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((base - tolerance - nowMs) / 1000)),
  };
}
