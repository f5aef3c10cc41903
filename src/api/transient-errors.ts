import { MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';

/**
 * Failures of a dependency that a retry can cure: the store busy or unreachable, Temporal
 * unreachable. They answer 503 with Retry-After instead of 500; the request changed nothing
 * that a retry with the same Idempotency-Key would not resume.
 */
export function isTransientDependencyError(err: unknown): boolean {
  if (err instanceof MongoNetworkError || err instanceof MongoServerSelectionError) return true;
  if (err instanceof MongoServerError && /SQLITE_BUSY|database is locked/.test(err.message)) return true;
  // @temporalio/client surfaces an unreachable server as a gRPC UNAVAILABLE (code 14) ServiceError.
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'ServiceError' && cause?.code === 14;
}
