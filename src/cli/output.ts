/** Human output by default; `--json` for scripts. Secrets shown once are flagged as such. */
export function print(json: boolean, value: Record<string, unknown> | Record<string, unknown>[], note?: string): void {
  if (json) {
    process.stdout.write(JSON.stringify(value, null, 2) + '\n');
    return;
  }
  const rows = Array.isArray(value) ? value : [value];
  if (rows.length === 0) process.stdout.write('(none)\n');
  for (const row of rows) {
    const width = Math.max(...Object.keys(row).map((k) => k.length));
    for (const [k, v] of Object.entries(row)) {
      process.stdout.write(`${k.padEnd(width)}  ${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
    }
    if (rows.length > 1) process.stdout.write('\n');
  }
  if (note) process.stdout.write(`\n${note}\n`);
}

export class UsageError extends Error {}
