/** A plain box around label/value rows, for the start-up banner. */
export function formatBox(title: string, rows: ReadonlyArray<readonly [string, string]>): string {
  const labelWidth = Math.max(...rows.map(([l]) => l.length));
  const lines = rows.map(([l, v]) => `${l.padEnd(labelWidth)}  ${v}`);
  const width = Math.max(title.length, ...lines.map((l) => l.length));
  const bar = '─'.repeat(width + 2);
  return [
    `┌${bar}┐`,
    `│ ${title.padEnd(width)} │`,
    `├${bar}┤`,
    ...lines.map((l) => `│ ${l.padEnd(width)} │`),
    `└${bar}┘`,
  ].join('\n');
}
