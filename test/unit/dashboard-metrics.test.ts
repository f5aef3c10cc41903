import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/paths.js';
import { observabilityRows } from '../../tools/stack/summary.js';
import { alertRules, dashboardExprs, readRepoFile } from '../helpers/dashboard.js';
import { exportedMetricNames, metricNamesIn } from '../helpers/promql-names.js';

/** GitHub's anchor of a Markdown heading. */
const anchorOf = (heading: string) => heading.trim().toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-');

describe('dashboard and alert queries', () => {
  it('finds metric names in PromQL, leaving out functions, labels, ranges and numbers', () => {
    assert.deepEqual(metricNamesIn('sum by (le, shard) (rate(x402_a_bucket{route="/x",m=~"a|b"}[5m])) / 1e18'), ['x402_a_bucket']);
    assert.deepEqual(metricNamesIn('x402_b / on(instance) (rate(x402_c[1h]) * 3600) < 12 or vector(0)'), ['x402_b', 'x402_c']);
    assert.deepEqual(metricNamesIn('deriv(max(x402_d)[5m:]) * 60 > bool 0'), ['x402_d']);
  });

  it('name only metrics the API and the worker export (histograms with _bucket, _sum, _count)', async () => {
    const exported = await exportedMetricNames();
    const exprs = [...dashboardExprs().map((e) => ['dashboard', e]), ...alertRules().map((r) => [r.alert, r.expr])];
    assert.ok(exprs.length > 20, 'the dashboard and the rules have queries');
    const unknown = exprs.flatMap(([where, e]) => metricNamesIn(e!).filter((n) => !exported.has(n)).map((n) => `${where}: ${n}`));
    assert.deepEqual(unknown, []);
    for (const [where, e] of exprs) assert.ok(metricNamesIn(e!).length > 0, `${where} selects a metric: ${e}`);
  });

  it('give each alert a runbook that is a heading of docs/operations.md', () => {
    const anchors = new Set(readRepoFile('docs', 'operations.md').split('\n').filter((l) => /^#{2,4} /.test(l)).map((l) => anchorOf(l.replace(/^#+ /, ''))));
    for (const rule of alertRules()) {
      const url = rule.annotations?.runbook_url ?? '';
      assert.match(url, /^docs\/operations\.md#/, `${rule.alert} has a runbook_url`);
      assert.ok(anchors.has(url.split('#')[1]!), `${rule.alert}: ${url} is a heading of docs/operations.md`);
    }
  });

  it("are named in the start banner with both metrics endpoints, and exist", () => {
    const rows = Object.fromEntries(observabilityRows('http://127.0.0.1:3000', 9464));
    assert.equal(rows.Metrics, 'http://127.0.0.1:3000/metrics (API), http://127.0.0.1:9464/metrics (worker)');
    for (const label of ['Alert rules', 'Dashboard']) {
      const file = rows[label]!.split(' ')[0]!;
      assert.ok(existsSync(join(projectRoot(), file)), `${label}: ${file}`);
    }
  });
});
