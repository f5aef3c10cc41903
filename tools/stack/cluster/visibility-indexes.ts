import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { LOCALHOST } from '../args.js';
import { UNUSED_VISIBILITY_INDEXES } from '../visibility-indexes.js';
import { pgBinary } from './postgres.js';
import { CLUSTER_SQL_USER, TEMPORAL_DATABASES } from './temporal-config.js';

const run = promisify(execFile);

/**
 * Indexes of the cluster's PostgreSQL visibility table (Temporal server 1.32's `postgresql/v12`
 * schema) that nothing here uses: the dev server's list (tools/stack/visibility-indexes.ts), less
 * `by_keyword_05` (the cluster maps OrderRef, the fifth of our keywords, there), plus the GIN
 * indexes PostgreSQL's schema adds over list, text and JSON columns. The stock schema keeps 74
 * indexes on `executions_visibility`; every workflow start, search-attribute upsert and close
 * writes a new row version into each one it covers. Kept: the default listing order, workflow id,
 * type, status, execution time, the namespace division, Keyword01-05 and the change-version index
 * patched workflows set. A query on a dropped column still answers, by a scan of the namespace's rows.
 */
export const POSTGRES_UNUSED_VISIBILITY_INDEXES = [
  ...UNUSED_VISIBILITY_INDEXES.filter((name) => name !== 'by_keyword_05'),
  'by_keyword_list_01',
  'by_keyword_list_02',
  'by_keyword_list_03',
  'by_text_01',
  'by_text_02',
  'by_text_03',
  'by_binary_checksums',
  'by_build_ids',
  'by_used_deployment_versions',
  'by_temporal_keyword_list_01',
  'by_temporal_keyword_list_02',
  'by_temporal_reported_problems',
  'by_temporal_external_payload_count',
  'by_temporal_external_payload_size_bytes',
] as const;

/** The statement that drops them; names absent from the schema (another server release) are skipped. */
export function dropVisibilityIndexesSql(indexes: readonly string[] = POSTGRES_UNUSED_VISIBILITY_INDEXES): string {
  return `DROP INDEX IF EXISTS ${indexes.map((n) => `"${n}"`).join(', ')}`;
}

/** Drops the unused indexes before the services start; idempotent. Returns how many were still there. */
export async function trimPostgresVisibilityIndexes(target: { port: number; password: string }): Promise<number> {
  const psql = (sql: string) =>
    run(pgBinary('psql'), ['-h', LOCALHOST, '-p', String(target.port), '-U', CLUSTER_SQL_USER, '-d', TEMPORAL_DATABASES.visibility, '-v', 'ON_ERROR_STOP=1', '-At', '-c', sql], {
      env: { ...process.env, PGPASSWORD: target.password },
      timeout: 60_000,
    });
  const names = POSTGRES_UNUSED_VISIBILITY_INDEXES.map((n) => `'${n}'`).join(', ');
  const { stdout } = await psql(`SELECT count(*) FROM pg_indexes WHERE tablename = 'executions_visibility' AND indexname IN (${names})`);
  const present = Number(stdout.trim());
  if (present > 0) await psql(dropVisibilityIndexesSql());
  return present;
}
