import { Registry } from 'prom-client';
import { apiMetrics, createRegistry, storeCommandCounter, storeCommandTimer, workerMetrics } from '../../src/observability/metrics.js';

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects: what is left once strings, label matchers,
 * ranges, grouping clauses, numbers, keywords and function names (a name before "(") are taken out.
 */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/(?<![A-Za-z0-9_:])\d+(\.\d+)?(e[+-]?\d+)?/gi, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = bare.slice(m.index + m[0].length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Every series name the API and the worker export, built from their registries as the processes build them. */
export async function exportedMetricNames(): Promise<Set<string>> {
  const api = createRegistry('api');
  apiMetrics(api);
  const worker = createRegistry('worker');
  workerMetrics(worker);
  const names = new Set<string>();
  for (const registry of [api, worker] as Registry[]) {
    storeCommandCounter(registry);
    storeCommandTimer(registry);
    for (const m of await registry.getMetricsAsJSON()) {
      names.add(m.name);
      const type = String(m.type);
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(m.name + suffix);
      if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(m.name + suffix);
    }
  }
  return names;
}
