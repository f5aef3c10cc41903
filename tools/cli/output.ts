/**
 * Human output by default; `--json` for scripts. Secrets shown once are flagged as such. A command
 * whose data itself goes to stdout (an export without --out) prints this to stderr instead.
 */
export function print(json: boolean, value: Record<string, unknown> | Record<string, unknown>[], note?: string, out: NodeJS.WritableStream = process.stdout): void {
  if (json) {
    out.write(JSON.stringify(value, null, 2) + '\n');
    return;
  }
  const rows = Array.isArray(value) ? value : [value];
  if (rows.length === 0) out.write('(none)\n');
  for (const row of rows) {
    const width = Math.max(...Object.keys(row).map((k) => k.length));
    for (const [k, v] of Object.entries(row)) {
      out.write(`${k.padEnd(width)}  ${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
    }
    if (rows.length > 1) out.write('\n');
  }
  if (note) out.write(`\n${note}\n`);
}

export class UsageError extends Error {}
