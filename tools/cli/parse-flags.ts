import { parseArgs } from 'node:util';
import { UsageError } from './output.js';

export type Flags = Record<string, string | boolean | undefined>;
export type FlagOptions = Record<string, { type: 'string' | 'boolean' }>;

/**
 * parseArgs, except that an option taking a value always takes the next argument, even one that
 * begins with '-' (a base64url key can: parseArgs alone calls that ambiguous and refuses it).
 * `--opt=value` works as well. Anything else unknown or malformed is a UsageError.
 */
export function parseFlags(args: readonly string[], options: FlagOptions, usage: string): Flags {
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
  try {
    return parseArgs({ args: joined, options, strict: true }).values as Flags;
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\nUsage: npm run admin -- ${usage}`);
  }
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
