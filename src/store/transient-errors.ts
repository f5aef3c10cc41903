import { MongoError, MongoErrorLabel, MongoNetworkError, MongoServerError, MongoServerSelectionError, MongoWriteConcernError } from 'mongodb';
import { FencedOut } from './fencing.js';
import { LeaseBusy } from './lease-lock.js';

/**
 * Server error codes the MongoDB retryable-writes specification names as retryable: a primary
 * stepping down or restarting, a node unreachable or recovering. A replica-set failover answers
 * these for a few seconds; a retry reaches the new primary.
 */
const MONGO_RETRYABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
  134, // ReadConcernMajorityNotAvailableYet
]);

const MONGO_RETRYABLE_LABELS = [MongoErrorLabel.RetryableWriteError, MongoErrorLabel.TransientTransactionError, MongoErrorLabel.PoolRequestedRetry, MongoErrorLabel.ResetPool];

function isMongoTransient(err: unknown): boolean {
  if (err instanceof MongoNetworkError || err instanceof MongoServerSelectionError) return true;
  if (!(err instanceof MongoError)) return false;
  if (MONGO_RETRYABLE_LABELS.some((label) => err.hasErrorLabel(label))) return true;
  const code = err instanceof MongoWriteConcernError ? (err.result?.writeConcernError?.code ?? err.code) : err.code;
  if (typeof code === 'number' && MONGO_RETRYABLE_CODES.has(code)) return true;
  return err instanceof MongoServerError && /SQLITE_BUSY|database is locked/.test(err.message);
}

/**
 * A store failure a retry can cure: the store busy, unreachable or failing over, or a lease held
 * too long or taken over mid-write (FencedOut). The HTTP kit answers these 503 (src/http/transient-errors.ts).
 */
export function isStoreTransient(err: unknown): boolean {
  return err instanceof LeaseBusy || err instanceof FencedOut || isMongoTransient(err);
}
