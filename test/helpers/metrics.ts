import type { World } from './world.js';

/** The API's Prometheus text. */
export async function scrapeApiMetrics(w: World): Promise<string> {
  return (await fetch(`${w.baseUrl.replace(/\/api\/v1$/, '')}/metrics`)).text();
}

/** The sum of every sample of `name` (exact metric name) whose labels include `labels`. */
export function metricSum(text: string, name: string, labels = ''): number {
  return text
    .split('\n')
    .filter((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}
