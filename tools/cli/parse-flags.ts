import { parseArgs } from 'node:util';
import { UsageError } from './output.js';

export type Flags = Record<string, string | boolean | undefined>;
export type FlagOptions = Record<string, { type: 'string' | 'boolean' }>;

/**
 * parseArgs, except that an option taking a value always takes the next argument, even one that
 * begins with '-' (a base64url key can: parseArgs alone calls that ambiguous and refuses it).
 * `--opt=value` works as well. Anything else unknown or malformed is a UsageError.
 */
export function parseFlags(args: readonly string[], options: FlagOptions, usage: string, positional?: string): Flags {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && i + 1 < args.length) {
      joined.push(`${arg}=${args[++i]}`);
    } else {
      joined.push(arg);
    }
  }
  let parsed: { values: Flags; positionals: string[] };
  try {
    parsed = parseArgs({ args: joined, options, strict: true, allowPositionals: positional !== undefined }) as typeof parsed;
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\nUsage: npm run admin -- ${usage}`);
  }
  if (positional === undefined) return parsed.values;
  // `positional` names the one argument the command takes without an option (dev pay <url>).
  if (parsed.positionals.length > 1) throw new UsageError(`one ${positional} only, got ${parsed.positionals.length}\nUsage: npm run admin -- ${usage}`);
  return { ...parsed.values, ...(parsed.positionals[0] !== undefined ? { [positional]: parsed.positionals[0] } : {}) };
}

/** Whether the arguments ask for help: `--help` or `-h` as an option, not as some option's value. */
export function asksForHelp(args: readonly string[], options: FlagOptions): boolean {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') return true;
    if (arg.startsWith('--') && !arg.includes('=') && options[arg.slice(2)]?.type === 'string') i++;
  }
  return false;
}
