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

/** Where on-call looks: both metrics endpoints, the alert rules and the dashboard (paths from the repository root). */
export function observabilityRows(apiOrigin: string, workerMetricsPort: number): [string, string][] {
  return [
    ['Metrics', `${apiOrigin}/metrics (API), ${workerMetricsPort > 0 ? `http://127.0.0.1:${workerMetricsPort}/metrics` : 'off (WORKER_METRICS_PORT=0)'} (worker)`],
    ['Alert rules', 'deploy/prometheus/alerts.yml (runbooks: docs/operations.md, "Alerts")'],
    ['Dashboard', 'deploy/grafana/credit-facilitator.json (import into Grafana)'],
  ];
}
