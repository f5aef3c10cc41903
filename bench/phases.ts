import { summarize } from './stats.js';

export type PhaseProfile = { phase: string; p50: number; p99: number }[];

/** `auth;dur=1.20, rate_limit;dur=0.80` -> { auth: 1.2, rate_limit: 0.8 } */
export function parseServerTiming(header: string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (header ?? '').split(',')) {
    const m = /^\s*([\w-]+);dur=([\d.]+)\s*$/.exec(part);
    if (m) out[m[1] as string] = Number(m[2]);
  }
  return out;
}

/** Per-phase p50/p99 over many requests, in the order the phases first appear. */
export function phaseProfile(timings: readonly Record<string, number>[]): PhaseProfile {
  const names = [...new Set(timings.flatMap((t) => Object.keys(t)))];
  return names.map((phase) => {
    const s = summarize(timings.map((t) => t[phase]).filter((x): x is number => x !== undefined));
    return { phase, p50: s.p50, p99: s.p99 };
  });
}
