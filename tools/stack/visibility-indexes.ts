import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Indexes of the dev server's SQLite visibility table (Temporal server 1.32's schema, the pinned CLI's)
 * that neither this product, its tests and bench, the Web UI's default views nor the server's own
 * queries use here. The stock schema keeps 47 indexes over `executions_visibility`, most on generated
 * JSON columns, and every workflow start and close rewrites the row: a CPU profile of the dev server
 * under the bench put a third of its time in those writes (docs/scaling.md).
 *
 * Kept: the default listing order, execution time, workflow id and type, status, the namespace
 * division (schedules), and Keyword01-04, where start-dev maps this product's four search attributes
 * (MerchantId, BorrowerId, PaymentStatus, BatchId) on a fresh file. Server 1.32 adds a block of
 * `Temporal*` system columns (bool, datetime, double, int, keyword, low-cardinality keyword) for its
 * own newer features; nothing here sets or queries them. A query on a dropped column still answers,
 * by a scan of the namespace's rows. Names absent from a file (an older schema) are skipped.
 */
export const UNUSED_VISIBILITY_INDEXES = [
  'by_history_length',
  'by_history_size_bytes',
  'by_execution_duration',
  'by_state_transition_count',
  'by_task_queue',
  'by_parent_workflow_id',
  'by_parent_run_id',
  'by_root_workflow_id',
  'by_root_run_id',
  'by_batcher_user',
  'by_temporal_scheduled_start_time',
  'by_temporal_scheduled_by_id',
  'by_temporal_schedule_paused',
  'by_temporal_pause_info',
  'by_temporal_worker_deployment_version',
  'by_temporal_workflow_versioning_behavior',
  'by_temporal_worker_deployment',
  'by_bool_01',
  'by_bool_02',
  'by_bool_03',
  'by_datetime_01',
  'by_datetime_02',
  'by_datetime_03',
  'by_double_01',
  'by_double_02',
  'by_double_03',
  'by_int_01',
  'by_int_02',
  'by_int_03',
  'by_keyword_05',
  'by_keyword_06',
  'by_keyword_07',
  'by_keyword_08',
  'by_keyword_09',
  'by_keyword_10',
  'by_temporal_bool_01',
  'by_temporal_bool_02',
  'by_temporal_datetime_01',
  'by_temporal_datetime_02',
  'by_temporal_double_01',
  'by_temporal_double_02',
  'by_temporal_int_01',
  'by_temporal_int_02',
  'by_temporal_keyword_01',
  'by_temporal_keyword_02',
  'by_temporal_keyword_03',
  'by_temporal_keyword_04',
  'by_temporal_low_cardinality_keyword_01',
] as const;

export function visibilityTrimArgs(dbFile: string, indexes: readonly string[] = UNUSED_VISIBILITY_INDEXES): string[] {
  return ['-db', dbFile, '-drop', indexes.join(',')];
}

/** Drops the unused indexes from our own dev server's file; idempotent, safe while it runs. */
export async function trimVisibilityIndexes(tool: string, dbFile: string): Promise<string> {
  const { stdout } = await run(tool, visibilityTrimArgs(dbFile), { timeout: 30_000 });
  return stdout.trim();
}

/** The visibility table's index names as they are now (for checks and operators). */
export async function listVisibilityIndexes(tool: string, dbFile: string): Promise<string[]> {
  const { stdout } = await run(tool, ['-db', dbFile, '-list'], { timeout: 30_000 });
  return stdout.split('\n').filter((line) => line !== '');
}
