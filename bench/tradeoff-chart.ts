/**
 * The batching trade-off drawn as SVG (no dependency): CONFIRMED p50 and p99 (left panel) and gas
 * per payment (right panel) against the offered load, one colour per batching policy.
 */
import { esc, fmt, logTicks, niceStep } from './svg-chart.js';

export interface TradeoffPoint {
  offered: number;
  confirmP50Ms: number;
  confirmP99Ms: number;
  gasPerPayment: number;
}

export interface TradeoffSeries {
  policy: string;
  points: readonly TradeoffPoint[];
}

const W = 880;
const H = 420;
const TOP = 76;
const BOTTOM = 56;
const PANEL = { w: 330, h: H - TOP - BOTTOM };
const LEFT_X = 70;
const RIGHT_X = LEFT_X + PANEL.w + 90;
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
const c = (v: number) => v.toFixed(1);

export function tradeoffChart(series: readonly TradeoffSeries[], title: string): string {
  const all = series.flatMap((s) => s.points).filter((p) => p.offered > 0);
  if (all.length === 0) return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><text x="20" y="40">no levels</text></svg>\n`;
  const xLo = Math.min(...all.map((p) => p.offered)) / 1.3;
  const xHi = Math.max(...all.map((p) => p.offered)) * 1.3;
  const x = (left: number, v: number) => left + ((Math.log(v) - Math.log(xLo)) / (Math.log(xHi) - Math.log(xLo))) * PANEL.w;
  const ms = all.flatMap((p) => [p.confirmP50Ms, p.confirmP99Ms]).filter((v) => Number.isFinite(v) && v > 0);
  const tLo = 10 ** Math.floor(Math.log10(Math.min(100, ...ms)));
  const tHi = 10 ** Math.ceil(Math.log10(Math.max(1000, ...ms)));
  const yT = (v: number) => TOP + PANEL.h - ((Math.log(Math.max(v, tLo)) - Math.log(tLo)) / (Math.log(tHi) - Math.log(tLo))) * PANEL.h;
  const gasMax = Math.max(1, ...all.map((p) => p.gasPerPayment).filter(Number.isFinite)) * 1.1;
  const gStep = niceStep(gasMax);
  const gTop = Math.ceil(gasMax / gStep) * gStep;
  const yG = (v: number) => TOP + PANEL.h - (v / gTop) * PANEL.h;

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(title)}</text>`);
  const offeredTicks = [...new Set(all.map((p) => p.offered))].sort((a, b) => a - b);
  for (const left of [LEFT_X, RIGHT_X]) {
    out.push(`<rect x="${left}" y="${TOP}" width="${PANEL.w}" height="${PANEL.h}" fill="none" stroke="#333"/>`);
    for (const v of offeredTicks) {
      out.push(`<line x1="${c(x(left, v))}" x2="${c(x(left, v))}" y1="${TOP}" y2="${TOP + PANEL.h}" stroke="#f0f0f0"/>`);
      out.push(`<text x="${c(x(left, v))}" y="${TOP + PANEL.h + 18}" text-anchor="middle">${fmt(v)}</text>`);
    }
    out.push(`<text x="${left + PANEL.w / 2}" y="${H - 16}" text-anchor="middle">offered captures/s (log scale)</text>`);
  }
  for (const v of logTicks(tLo, tHi)) {
    out.push(`<line x1="${LEFT_X}" x2="${LEFT_X + PANEL.w}" y1="${c(yT(v))}" y2="${c(yT(v))}" stroke="#eee"/>`);
    out.push(`<text x="${LEFT_X - 8}" y="${c(yT(v) + 4)}" text-anchor="end">${v >= 1000 ? `${v / 1000} s` : `${v} ms`}</text>`);
  }
  for (let v = 0; v <= gTop + 1e-9; v += gStep) {
    out.push(`<line x1="${RIGHT_X}" x2="${RIGHT_X + PANEL.w}" y1="${c(yG(v))}" y2="${c(yG(v))}" stroke="#eee"/>`);
    out.push(`<text x="${RIGHT_X - 8}" y="${c(yG(v) + 4)}" text-anchor="end">${fmt(v)}</text>`);
  }
  out.push(`<text x="${LEFT_X + PANEL.w / 2}" y="${TOP - 8}" text-anchor="middle">capture -> CONFIRMED seen by the merchant: p50 solid, p99 dashed (log)</text>`);
  out.push(`<text x="${RIGHT_X + PANEL.w / 2}" y="${TOP - 8}" text-anchor="middle">gas per payment (settleBatch gas / payments)</text>`);

  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length] as string;
    const pts = [...s.points].filter((p) => p.offered > 0).sort((a, b) => a.offered - b.offered);
    const line = (left: number, y: (v: number) => number, key: keyof TradeoffPoint, dash = '') => {
      const ok = pts.filter((p) => Number.isFinite(p[key]) && p[key] > 0);
      out.push(`<polyline points="${ok.map((p) => `${c(x(left, p.offered))},${c(y(p[key]))}`).join(' ')}" fill="none" stroke="${color}" stroke-width="2" ${dash ? `stroke-dasharray="${dash}"` : ''}/>`);
      for (const p of ok) out.push(`<circle cx="${c(x(left, p.offered))}" cy="${c(y(p[key]))}" r="3" fill="${color}"><title>${esc(s.policy)}: ${key} ${p[key].toFixed(0)} at ${p.offered}/s</title></circle>`);
    };
    line(LEFT_X, yT, 'confirmP50Ms');
    line(LEFT_X, yT, 'confirmP99Ms', '6 3');
    line(RIGHT_X, yG, 'gasPerPayment');
    const lx = LEFT_X + i * 260;
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="36" y2="36" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${lx + 28}" y="40" font-size="11">${esc(s.policy)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
