import { isGrpcServiceError, ServiceError } from '@temporalio/client';
import { isStoreTransient } from '../store/transient-errors.js';

/** gRPC codes a retry can cure: the server away, too slow, or shedding load (Temporal's rate limits). */
const GRPC_RETRYABLE = new Set([
  14, // UNAVAILABLE
  4, // DEADLINE_EXCEEDED
  8, // RESOURCE_EXHAUSTED
]);

/**
 * Node's own errors for a connection that broke or could not be made. The MongoDB driver wraps
 * most socket failures in MongoNetworkError, but a write that waited for 'drain' when the store
 * went away rethrows the socket's raw error ("This socket has been ended by the other party", EPIPE).
 */
const SOCKET_ERROR_CODES = new Set([
  'EPIPE',
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTCONN',
  'EAI_AGAIN',
  'ERR_SOCKET_CLOSED',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
]);

/** A broken or refused connection, here or anywhere down the error's cause chain (bounded: causes can loop). */
function isSocketFailure(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && SOCKET_ERROR_CODES.has(code)) return true;
    current = current.cause;
  }
  return false;
}

/** Temporal could not be reached (server down, restarting or overloaded) within the client's own retries. */
export function isTemporalUnreachable(err: unknown): boolean {
  const grpc = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(grpc) && GRPC_RETRYABLE.has(grpc.code);
}

/**
 * Failures of a dependency that a retry can cure: Temporal unreachable or shedding load, the
 * store busy, unreachable or failing over, a store lease held too long or taken over mid-write
 * (FencedOut), a connection to any of them broken mid-request. They answer 503 with Retry-After instead of 500. The Idempotency-Key a capture
 * claimed stays bound, so the retry with the same key resumes it.
 */
export function isTransientDependencyError(err: unknown): boolean {
  return isStoreTransient(err) || isTemporalUnreachable(err) || isSocketFailure(err);
}
