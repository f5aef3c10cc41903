import { join } from 'node:path';
import { toolsCacheDir } from '../../../src/config/paths.js';
import { goBuild } from '../gobuild.js';
import { cachedOrBuilt, toolsBinDir } from '../tools.js';

/**
 * The Temporal server our CLI's dev server embeds (CLI 1.9.1 = server 1.32.0), built from the Go
 * module proxy for the cluster topology: the same code as start-dev, run as separate services.
 */
export const TEMPORAL_SERVER_VERSION = '1.32.0';
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';

type Log = (m: string) => void;

export interface TemporalServerBinaries {
  /** cmd/server: `temporal-server --config-file <f> start --service <name>`. */
  server: string;
  /** cmd/tools/sql: creates the databases and applies the schema's versioned migrations. */
  sqlTool: string;
}

export function temporalServerPath(cacheDir: string = toolsCacheDir()): string {
  return join(toolsBinDir(cacheDir), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

export function temporalSqlToolPath(cacheDir: string = toolsCacheDir()): string {
  return join(toolsBinDir(cacheDir), `temporal-sql-tool-${TEMPORAL_SERVER_VERSION}`);
}

/**
 * Both binaries, from the per-user tools cache or built into it once (several minutes; the schema
 * tool second, from Go's build cache the server filled). A file lock keeps two starts from building twice.
 */
export async function ensureTemporalServer(log: Log, signal?: AbortSignal): Promise<TemporalServerBinaries> {
  const ctx = { log, signal };
  const build = (output: string, pkg: string, label: string) =>
    cachedOrBuilt(
      output,
      () => goBuild({ label, output, target: { kind: 'install', pkg: `${TEMPORAL_SERVER_MODULE}/${pkg}@v${TEMPORAL_SERVER_VERSION}` }, expectation: 'first cluster start only, takes 10 minutes or more on 2 cores' }, log, signal),
      ctx,
    );
  const server = await build(temporalServerPath(), 'cmd/server', `the Temporal server v${TEMPORAL_SERVER_VERSION}`);
  const sqlTool = await build(temporalSqlToolPath(), 'cmd/tools/sql', `temporal-sql-tool v${TEMPORAL_SERVER_VERSION}`);
  return { server, sqlTool };
}
