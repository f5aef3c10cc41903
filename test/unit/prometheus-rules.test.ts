import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/config/paths.js';
import { resolvePromtool } from '../../tools/stack/promtool.js';
import { dashboardExprs } from '../helpers/dashboard.js';

const run = promisify(execFile);
const rulesDir = join(projectRoot(), 'deploy', 'prometheus');

/** promtool's exit status and everything it printed (a failure says which rule or test). */
async function promtool(bin: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(bin, args, { cwd: rulesDir });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('Prometheus alert rules (deploy/prometheus)', function () {
  let bin: string;
  before(async function () {
    // npm test fetched it before the suites (tools/stack/prepare-tools.ts); a lone unit run builds it once.
    this.timeout(40 * 60_000);
    bin = await resolvePromtool({ log: (m) => process.stderr.write(`promtool | ${m}\n`) });
  });

  it('pass promtool check rules', async () => {
    const r = await promtool(bin, ['check', 'rules', 'alerts.yml']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /SUCCESS: \d+ rules found/);
  });

  it('pass their promtool unit tests: each alert fires on a synthetic series and stays quiet on a healthy one', async () => {
    const r = await promtool(bin, ['test', 'rules', 'alerts.test.yml']);
    assert.equal(r.code, 0, r.output);
    assert.doesNotMatch(r.output, /FAILED/);
  });

  it("parse every query of the Grafana dashboard (each checked as a recording rule's expression)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cf-dashboard-rules-'));
    try {
      const rules = dashboardExprs().map((expr, i) => ({ record: `dashboard:query_${i}`, expr }));
      writeFileSync(join(dir, 'dashboard.yml'), stringify({ groups: [{ name: 'dashboard', rules }] }));
      const r = await promtool(bin, ['check', 'rules', join(dir, 'dashboard.yml')]);
      assert.equal(r.code, 0, r.output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
