import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LOCALHOST } from '../args.js';
import { CLUSTER_SQL_USER, TEMPORAL_DATABASES, TEMPORAL_SQL_PLUGIN } from './temporal-config.js';

const run = promisify(execFile);

/** The database FerretDB keeps the store in, on the same PostgreSQL. */
export const FERRETDB_DATABASE = 'ferretdb';

/** The schema each Temporal database gets, by the names the SQL tool embeds (`--schema-name`). */
export const SCHEMA_NAMES: Record<keyof typeof TEMPORAL_DATABASES, string> = {
  default: 'postgresql/v12/temporal',
  visibility: 'postgresql/v12/visibility',
};

export interface SqlToolTarget {
  sqlTool: string;
  port: number;
  password: string;
}

/** One temporal-sql-tool call; the password goes in SQL_PASSWORD, never in argv. */
export async function sqlTool(t: SqlToolTarget, database: string, args: string[]): Promise<string> {
  const base = ['--plugin', TEMPORAL_SQL_PLUGIN, '--ep', LOCALHOST, '-p', String(t.port), '-u', CLUSTER_SQL_USER, '--db', database];
  try {
    const { stdout, stderr } = await run(t.sqlTool, [...base, ...args], { env: { ...process.env, SQL_PASSWORD: t.password }, timeout: 180_000 });
    return `${stdout}${stderr}`;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`temporal-sql-tool ${args[0]} on ${database} failed: ${(e.stderr || e.stdout || e.message).trim().split('\n').slice(-5).join('\n')}`);
  }
}

/**
 * What an operator runs to create a cluster's databases and to upgrade them: on a fresh cluster
 * (no marker yet) each database is (re)created and versioned from 0.0; every start then applies
 * the versioned migrations the server's release ships (`update-schema`, a no-op when current).
 * FerretDB's database is created alongside; FerretDB makes its own tables.
 */
export async function setUpTemporalSchema(t: SqlToolTarget, clusterDir: string, log: (m: string) => void): Promise<void> {
  const marker = join(clusterDir, 'schema-created');
  if (!existsSync(marker)) {
    for (const database of [...Object.values(TEMPORAL_DATABASES), FERRETDB_DATABASE]) {
      await sqlTool(t, database, ['drop-database', '--force']);
      await sqlTool(t, database, ['create-database']);
    }
    for (const [store, database] of Object.entries(TEMPORAL_DATABASES)) {
      await sqlTool(t, database, ['setup-schema', '-v', '0.0']);
      log(`temporal-sql-tool: ${database} created for the ${store} store`);
    }
    writeFileSync(marker, `${new Date().toISOString()}\n`);
  }
  for (const [store, database] of Object.entries(TEMPORAL_DATABASES) as [keyof typeof TEMPORAL_DATABASES, string][]) {
    await sqlTool(t, database, ['update-schema', '--schema-name', SCHEMA_NAMES[store]]);
  }
  log('temporal-sql-tool: schemas at the versions this server ships');
}
