import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from '../../src/config/paths.js';

export const readRepoFile = (...path: string[]): string => readFileSync(join(projectRoot(), ...path), 'utf8');

/** Every `expr` anywhere in a Grafana dashboard's JSON. */
function exprsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) exprsIn(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'expr' && typeof v === 'string') out.push(v);
      else exprsIn(v, out);
    }
  }
  return out;
}

/** The PromQL of every panel of deploy/grafana/credit-facilitator.json. */
export const dashboardExprs = (): string[] => exprsIn(JSON.parse(readRepoFile('deploy', 'grafana', 'credit-facilitator.json')));

export interface AlertRule {
  alert: string;
  expr: string;
  annotations?: { runbook_url?: string };
}

/** The rules of deploy/prometheus/alerts.yml. */
export const alertRules = (): AlertRule[] => (parse(readRepoFile('deploy', 'prometheus', 'alerts.yml')) as { groups: { rules: AlertRule[] }[] }).groups.flatMap((g) => g.rules);
