export interface Row {
  metric: string;
  measured: string;
  /** What the figure is compared with: a bar from the issue or a baseline measured in the same run. */
  baseline: string;
  verdict?: 'meets' | 'misses' | '';
}

export interface Section {
  title: string;
  rows: Row[];
}

const mark = (v: Row['verdict']) => (v === 'meets' ? 'meets' : v === 'misses' ? 'MISSES' : '');

export function renderText(sections: Section[]): string {
  const all = sections.flatMap((s) => s.rows);
  const w = [
    Math.max(6, ...all.map((r) => r.metric.length)),
    Math.max(8, ...all.map((r) => r.measured.length)),
    Math.max(8, ...all.map((r) => r.baseline.length)),
  ];
  const line = (a: string, b: string, c: string, d: string) => `${a.padEnd(w[0] as number)} | ${b.padStart(w[1] as number)} | ${c.padEnd(w[2] as number)} | ${d}`;
  const out: string[] = [];
  for (const s of sections) {
    out.push('', `== ${s.title}`, line('metric', 'measured', 'baseline', 'verdict'), '-'.repeat((w[0] as number) + (w[1] as number) + (w[2] as number) + 18));
    for (const r of s.rows) out.push(line(r.metric, r.measured, r.baseline, mark(r.verdict)));
  }
  return out.join('\n');
}

export function renderMarkdown(sections: Section[]): string {
  const out: string[] = [];
  for (const s of sections) {
    out.push(`### ${s.title}`, '', '| metric | measured | baseline | verdict |', '|---|---:|---|---|');
    for (const r of s.rows) out.push(`| ${r.metric} | ${r.measured} | ${r.baseline} | ${mark(r.verdict)} |`);
    out.push('');
  }
  return out.join('\n');
}

export const ms = (x: number) => `${x.toFixed(1)} ms`;
export const seconds = (x: number) => `${x.toFixed(2)} s`;
export const perSecond = (x: number) => `${x.toFixed(1)} /s`;
export const gas = (x: number) => `${Math.round(x).toLocaleString('en-US')} gas`;
export const atMost = (value: number, bar: number): Row['verdict'] => (value <= bar ? 'meets' : 'misses');
export const atLeast = (value: number, bar: number): Row['verdict'] => (value >= bar ? 'meets' : 'misses');

/** A plain grid (first column left-aligned, the rest right-aligned), e.g. metrics down, levels across. */
export interface Grid {
  title: string;
  header: string[];
  rows: string[][];
}

export function renderGridText(g: Grid): string {
  const all = [g.header, ...g.rows];
  const widths = g.header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(' | ');
  return ['', `== ${g.title}`, line(g.header), '-'.repeat(widths.reduce((a, b) => a + b + 3, 0)), ...g.rows.map(line)].join('\n');
}

export function renderGridMarkdown(g: Grid): string {
  return [`### ${g.title}`, '', `| ${g.header.join(' | ')} |`, `|${g.header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`, ...g.rows.map((r) => `| ${r.join(' | ')} |`), ''].join('\n');
}

/** A number with `digits` decimals, or n/a when it is not a finite number. */
export const num = (x: number | null | undefined, digits = 1) => (x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(digits));
