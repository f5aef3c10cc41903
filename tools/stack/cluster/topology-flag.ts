import { z } from 'zod';

const Topology = z.enum(['dev', 'cluster']);

/**
 * `--topology dev|cluster` (or `--topology=cluster`) from the start command's arguments, for
 * TEMPORAL_TOPOLOGY; undefined when absent. Any other argument is a mistake the caller reports.
 */
export function parseTopologyFlag(argv: string[]): { topology?: 'dev' | 'cluster'; error?: string } {
  if (argv.length === 0) return {};
  const [first, second, ...rest] = argv;
  const inline = /^--topology=(.*)$/.exec(first!);
  const value = inline ? inline[1] : first === '--topology' ? second : undefined;
  const extra = inline ? [second, ...rest].filter((a) => a !== undefined) : rest;
  if (value === undefined || extra.length > 0) return { error: `usage: npm run stack -- [--topology dev|cluster]; got ${JSON.stringify(argv.join(' '))}` };
  const parsed = Topology.safeParse(value);
  return parsed.success ? { topology: parsed.data } : { error: `--topology must be dev or cluster, got ${JSON.stringify(value)}` };
}
