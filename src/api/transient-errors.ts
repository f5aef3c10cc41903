import { isGrpcServiceError, ServiceError } from '@temporalio/client';
import { MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { FencedOut } from '../store/fencing.js';
import { LeaseBusy } from '../store/lease-lock.js';

const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

/** Temporal could not be reached (server down or restarting) within the client's own retries. */
export function isTemporalUnreachable(err: unknown): boolean {
  const grpc = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(grpc) && (grpc.code === GRPC_UNAVAILABLE || grpc.code === GRPC_DEADLINE_EXCEEDED);
}

/**
 * Failures of a dependency that a retry can cure: Temporal unreachable, the store busy or
 * unreachable, a store lease held too long or taken over mid-write (FencedOut). They answer 503 with Retry-After instead of 500. The
 * Idempotency-Key a capture claimed stays bound, so the retry with the same key resumes it.
 */
export function isTransientDependencyError(err: unknown): boolean {
  if (err instanceof LeaseBusy || err instanceof FencedOut || isTemporalUnreachable(err)) return true;
  if (err instanceof MongoNetworkError || err instanceof MongoServerSelectionError) return true;
  return err instanceof MongoServerError && /SQLITE_BUSY|database is locked/.test(err.message);
}
