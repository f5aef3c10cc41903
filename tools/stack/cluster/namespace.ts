import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SEARCH_ATTRIBUTES } from '../args.js';

const run = promisify(execFile);

/** Workflow history kept this long after a workflow closes (the dev server's default is 1 day; production sets its own). */
export const CLUSTER_NAMESPACE_RETENTION = '7d';

async function cli(temporal: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(temporal, args, { timeout: 30_000 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`temporal ${args.slice(0, 3).join(' ')} failed: ${(e.stderr || e.message).trim().split('\n').slice(-3).join(' ')}`);
  }
}

/**
 * The namespace and our search attributes, as an operator creates them on a cluster with the
 * Temporal CLI (`temporal operator namespace create`, `temporal operator search-attribute create`):
 * only what is missing, so it is safe at every start. Returns what it created.
 */
export async function ensureNamespaceWithCli(temporal: string, address: string, namespace: string): Promise<string[]> {
  const created: string[] = [];
  const at = ['--address', address];
  const described = await run(temporal, ['operator', 'namespace', 'describe', ...at, '--namespace', namespace, '-o', 'json'], { timeout: 30_000 }).then(
    () => true,
    (err: { stderr?: string }) => {
      if (/not found/i.test(err.stderr ?? '')) return false;
      throw new Error(`temporal operator namespace describe failed: ${(err.stderr ?? String(err)).trim()}`);
    },
  );
  if (!described) {
    await cli(temporal, ['operator', 'namespace', 'create', ...at, '--namespace', namespace, '--retention', CLUSTER_NAMESPACE_RETENTION]);
    created.push(`namespace ${namespace}`);
  }
  const listed = JSON.parse(await cli(temporal, ['operator', 'search-attribute', 'list', ...at, '--namespace', namespace, '-o', 'json'])) as unknown;
  const have = new Set(searchAttributeNames(listed));
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) {
    if (have.has(name)) continue;
    await cli(temporal, ['operator', 'search-attribute', 'create', ...at, '--namespace', namespace, '--name', name, '--type', type]);
    created.push(`search attribute ${name} (${type})`);
  }
  return created;
}

/** Custom attribute names in `temporal operator search-attribute list -o json` (customAttributes keys). */
export function searchAttributeNames(listed: unknown): string[] {
  if (typeof listed !== 'object' || listed === null) return [];
  const custom = (listed as { customAttributes?: unknown }).customAttributes;
  return typeof custom === 'object' && custom !== null ? Object.keys(custom) : [];
}
