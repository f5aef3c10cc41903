/**
 * The soak's plot, drawn by hand as SVG (two panels over time: settled/s, then resident memory per
 * process), and turned into PNG by the headless Chromium the tests already use.
 */
import { chromium } from 'playwright-core';
import type { SoakSample } from './soak-verdict.js';

const W = 900;
const PANEL_H = 260;
const M = { left: 70, right: 170, top: 40, bottom: 40 };
const PW = W - M.left - M.right;
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return ([1, 2, 2.5, 5, 10].map((k) => k * p).find((s) => s >= max) as number) ?? p * 10;
}

interface Series {
  name: string;
  points: [number, number][];
}

function panel(top: number, title: string, unit: string, series: Series[], tMax: number): string {
  const yMax = niceMax(Math.max(...series.flatMap((s) => s.points.map(([, y]) => y)).filter(Number.isFinite)));
  const x = (t: number) => M.left + (t / tMax) * PW;
  const y = (v: number) => top + PANEL_H - (v / yMax) * PANEL_H;
  const out: string[] = [`<text x="${M.left}" y="${top - 12}" font-size="14" font-weight="bold">${esc(title)}</text>`];
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    out.push(`<line x1="${M.left}" x2="${M.left + PW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    out.push(`<text x="${M.left - 8}" y="${y(v) + 4}" font-size="11" text-anchor="end">${+v.toFixed(1)}</text>`);
  }
  for (let i = 0; i <= 6; i++) {
    const t = (tMax * i) / 6;
    out.push(`<text x="${x(t)}" y="${top + PANEL_H + 16}" font-size="11" text-anchor="middle">${(t / 60).toFixed(t / 60 < 10 ? 1 : 0)} min</text>`);
  }
  out.push(`<text x="14" y="${top + PANEL_H / 2}" font-size="12" transform="rotate(-90 14 ${top + PANEL_H / 2})" text-anchor="middle">${esc(unit)}</text>`);
  out.push(`<rect x="${M.left}" y="${top}" width="${PW}" height="${PANEL_H}" fill="none" stroke="#444"/>`);
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length] as string;
    const d = s.points.filter(([, v]) => Number.isFinite(v)).map(([t, v], j) => `${j === 0 ? 'M' : 'L'}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="1.6"/>`);
    out.push(`<line x1="${M.left + PW + 12}" x2="${M.left + PW + 30}" y1="${top + 14 + i * 18}" y2="${top + 14 + i * 18}" stroke="${color}" stroke-width="3"/>`);
    out.push(`<text x="${M.left + PW + 36}" y="${top + 18 + i * 18}" font-size="12">${esc(s.name)}</text>`);
  });
  return out.join('\n');
}

export function soakSvg(samples: readonly SoakSample[], title: string, offeredPerSec?: number): string {
  const tMax = Math.max(60, samples.at(-1)?.t ?? 60);
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.rssMb)))];
  const settled: Series[] = [
    { name: 'settled/s', points: samples.map((s) => [s.t, s.settledPerSec]) },
    ...(offeredPerSec !== undefined ? [{ name: 'offered/s', points: [[0, offeredPerSec], [tMax, offeredPerSec]] as [number, number][] }] : []),
  ];
  const rss: Series[] = names.map((n) => ({ name: `${n} RSS`, points: samples.map((s) => [s.t, s.rssMb[n] ?? Number.NaN]) }));
  const top2 = M.top + PANEL_H + 70;
  const H = top2 + PANEL_H + M.bottom;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" font-size="15" text-anchor="middle">${esc(title)}</text>`,
    panel(M.top + 10, 'Payments settled per second', 'settled/s', settled, tMax),
    panel(top2, 'Resident memory per process', 'MB', rss, tMax),
    '</svg>',
  ].join('\n');
}

/** Renders the SVG in headless Chromium and writes a PNG screenshot of it. */
export async function writePng(svg: string, path: string): Promise<void> {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: W, height: 800 } });
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    await page.locator('svg').screenshot({ path, type: 'png' });
  } finally {
    await browser.close();
  }
}
