/**
 * The throughput chart, drawn by hand as SVG (no dependency): settled/s and accepted/s (left axis,
 * with the offered rate as a dotted diagonal) and capture p99 (right axis, log scale) against the
 * offered rate (log scale).
 */

export interface ChartPoint {
  offered: number;
  accepted: number;
  settled: number;
  captureP99Ms: number;
}

const W = 760;
const H = 440;
const M = { left: 64, right: 76, top: 48, bottom: 56 };
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;
const COLORS = { settled: '#1f77b4', accepted: '#2ca02c', offered: '#999999', p99: '#d62728' };

export const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const c = (v: number) => v.toFixed(1);
export const fmt = (x: number) => (x >= 1000 ? `${+(x / 1000).toFixed(1)}k` : `${+x.toFixed(x < 10 ? 1 : 0)}`);

export function niceStep(max: number): number {
  const raw = max / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw) as number) ?? p * 10;
}

/** 1, 2, 5 x 10^k ticks within [lo, hi]. */
export function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) for (const k of [1, 2, 5]) {
    const v = k * 10 ** e;
    if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
  }
  return out;
}

export function throughputChart(points: readonly ChartPoint[], title: string): string {
  const pts = [...points].filter((p) => p.offered > 0).sort((a, b) => a.offered - b.offered);
  if (pts.length === 0) return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><text x="20" y="40">no levels</text></svg>\n`;
  const xLo = Math.min(...pts.map((p) => p.offered)) / 1.25;
  const xHi = Math.max(...pts.map((p) => p.offered)) * 1.25;
  const x = (v: number) => M.left + ((Math.log(v) - Math.log(xLo)) / (Math.log(xHi) - Math.log(xLo))) * PW;
  const yMax = Math.max(1, ...pts.map((p) => Math.max(p.offered, p.accepted, p.settled))) * 1.08;
  const yStep = niceStep(yMax);
  const yTop = Math.ceil(yMax / yStep) * yStep;
  const y = (v: number) => M.top + PH - (v / yTop) * PH;
  const p99s = pts.map((p) => p.captureP99Ms).filter((v) => Number.isFinite(v) && v > 0);
  const rLo = 10 ** Math.floor(Math.log10(Math.min(1, ...p99s)));
  const rHi = 10 ** Math.ceil(Math.log10(Math.max(10, ...p99s)));
  const r = (v: number) => M.top + PH - ((Math.log(Math.max(v, rLo)) - Math.log(rLo)) / (Math.log(rHi) - Math.log(rLo))) * PH;

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="24" text-anchor="middle" font-size="15">${esc(title)}</text>`);
  // grid and axes
  for (let v = 0; v <= yTop + 1e-9; v += yStep) {
    out.push(`<line x1="${M.left}" x2="${M.left + PW}" y1="${c(y(v))}" y2="${c(y(v))}" stroke="#eee"/>`);
    out.push(`<text x="${M.left - 8}" y="${c(y(v) + 4)}" text-anchor="end">${fmt(v)}</text>`);
  }
  for (const p of pts) {
    out.push(`<line x1="${c(x(p.offered))}" x2="${c(x(p.offered))}" y1="${M.top}" y2="${M.top + PH}" stroke="#f3f3f3"/>`);
    out.push(`<text x="${c(x(p.offered))}" y="${M.top + PH + 18}" text-anchor="middle">${fmt(p.offered)}</text>`);
  }
  for (const v of logTicks(rLo, rHi)) out.push(`<text x="${M.left + PW + 8}" y="${c(r(v) + 4)}" fill="${COLORS.p99}">${fmt(v)}</text>`);
  out.push(`<rect x="${M.left}" y="${M.top}" width="${PW}" height="${PH}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${M.left + PW / 2}" y="${H - 14}" text-anchor="middle">offered captures/s (log scale)</text>`);
  out.push(`<text transform="translate(18 ${M.top + PH / 2}) rotate(-90)" text-anchor="middle">payments/s</text>`);
  out.push(`<text transform="translate(${W - 14} ${M.top + PH / 2}) rotate(90)" text-anchor="middle" fill="${COLORS.p99}">capture p99, ms (log scale)</text>`);

  // offered diagonal (where accepted and settled would be with nothing lost)
  const diag = pts.map((p) => `${x(p.offered).toFixed(1)},${y(p.offered).toFixed(1)}`).join(' ');
  out.push(`<polyline points="${diag}" fill="none" stroke="${COLORS.offered}" stroke-dasharray="2 4" stroke-width="1.5"/>`);
  const series = (key: 'accepted' | 'settled', scale: (v: number) => number, color: string, dash = '') => {
    const line = pts.map((p) => `${x(p.offered).toFixed(1)},${scale(p[key]).toFixed(1)}`).join(' ');
    out.push(`<polyline points="${line}" fill="none" stroke="${color}" stroke-width="2" ${dash ? `stroke-dasharray="${dash}"` : ''}/>`);
    for (const p of pts) out.push(`<circle cx="${x(p.offered).toFixed(1)}" cy="${scale(p[key]).toFixed(1)}" r="3.5" fill="${color}"><title>${key} ${p[key].toFixed(1)}/s at ${p.offered.toFixed(0)}/s offered</title></circle>`);
  };
  series('accepted', y, COLORS.accepted, '6 3');
  series('settled', y, COLORS.settled);
  const p99 = pts.filter((p) => Number.isFinite(p.captureP99Ms));
  out.push(`<polyline points="${p99.map((p) => `${x(p.offered).toFixed(1)},${r(p.captureP99Ms).toFixed(1)}`).join(' ')}" fill="none" stroke="${COLORS.p99}" stroke-width="2"/>`);
  for (const p of p99) out.push(`<rect x="${(x(p.offered) - 3.5).toFixed(1)}" y="${(r(p.captureP99Ms) - 3.5).toFixed(1)}" width="7" height="7" fill="${COLORS.p99}"><title>capture p99 ${p.captureP99Ms.toFixed(0)} ms at ${p.offered.toFixed(0)}/s offered</title></rect>`);

  // legend
  const legend: [string, string, string][] = [
    ['settled/s', COLORS.settled, ''],
    ['accepted/s', COLORS.accepted, '6 3'],
    ['offered/s', COLORS.offered, '2 4'],
    ['capture p99 (right)', COLORS.p99, ''],
  ];
  legend.forEach(([name, color, dash], i) => {
    const lx = M.left + 12 + i * 150;
    out.push(`<line x1="${lx}" x2="${lx + 24}" y1="${M.top - 10}" y2="${M.top - 10}" stroke="${color}" stroke-width="2" ${dash ? `stroke-dasharray="${dash}"` : ''}/>`);
    out.push(`<text x="${lx + 30}" y="${M.top - 6}">${esc(name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
