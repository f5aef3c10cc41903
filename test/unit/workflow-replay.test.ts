import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, makeTelemetryFilterString, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { projectRoot } from '../../src/config/paths.js';
import { historyFromJson } from '../replay/history-json.js';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { Resource } from '@opentelemetry/resources';
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { workflowCode } from '../../workers/workflow-code.js';

/**
 * Workflows in flight must keep replaying after a deploy. test/replay/histories holds histories
 * recorded from real stacks (test/replay/record-histories.ts; the manifest beside the folder says
 * which commit and workflow each came from); every one must replay against the workflow code
 * of this build, the same bundle the worker loads.
 */
const root = projectRoot();
const historiesDir = join(root, 'test', 'replay', 'histories');
const manifestFile = join(root, 'test', 'replay', 'manifest.json');
const workflowsPath = fileURLToPath(new URL('../../workflows/index.js', import.meta.url));
const incompatibleWorkflowsPath = fileURLToPath(new URL('../replay/nondeterministic-workflows.js', import.meta.url));

interface Recorded {
  file: string;
  workflowId: string;
  workflowType: string;
  history: ReturnType<typeof historyFromJson>;
}

function loadHistories(): Recorded[] {
  const manifest = existsSync(manifestFile) ? (JSON.parse(readFileSync(manifestFile, 'utf8')) as { file: string; workflowId: string }[]) : [];
  const ids = new Map(manifest.map((m) => [m.file, m.workflowId]));
  return readdirSync(historiesDir)
    .filter((f) => f.endsWith('.json'))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((file) => {
      const history = historyFromJson(JSON.parse(readFileSync(join(historiesDir, file), 'utf8')));
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      assert.ok(started?.workflowType?.name, `${file}: the first event is not WorkflowExecutionStarted`);
      return { file, workflowId: ids.get(file) ?? file.replace(/\.json$/, ''), workflowType: started.workflowType.name, history };
    });
}

const replayOptions = (path: string) => ({ workflowsPath: path, bundlerOptions: { ignoreModules: [] } });

describe('workflow replay: recorded histories against the current workflow code', function () {
  this.timeout(180_000);
  let histories: Recorded[];
  before(() => {
    histories = loadHistories();
    // Quiet: no webpack report, no core warning for the failure the second test provokes. The
    // replay results carry every error this suite reports. (Throws if a runtime exists already.)
    try {
      Runtime.install({
        logger: new DefaultLogger('ERROR'),
        telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }), forward: {} } },
      });
    } catch {
      // another suite installed one: keep it
    }
  });

  it('replays every recorded history without a determinism or other error', async () => {
    assert.ok(histories.length > 0, `no histories in ${historiesDir}`);
    const failed: string[] = [];
    let i = 0;
    for await (const result of Worker.runReplayHistories(
      replayOptions(workflowsPath),
      histories.map((h) => ({ workflowId: h.workflowId, history: h.history })),
    )) {
      const h = histories[i++];
      assert.ok(h, 'more replay results than histories');
      assert.equal(result.workflowId, h.workflowId, 'replay results out of order');
      if (result.error) failed.push(`${h.file} (${h.workflowType}): ${result.error.name}: ${result.error.message}`);
    }
    assert.equal(i, histories.length, 'a history was not replayed');
    assert.deepEqual(failed, [], `histories that no longer replay:\n${failed.join('\n')}`);
  });

  it('replays every recorded history with the OpenTelemetry workflow interceptors (a worker with tracing on)', async () => {
    const failed: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(
      { ...workflowCode(true), sinks: { exporter: makeWorkflowExporter(new NoopSpanProcessor(), Resource.empty()) } },
      histories.map((h) => ({ workflowId: h.workflowId, history: h.history })),
    )) {
      const h = histories[replayed++];
      if (result.error) failed.push(`${h?.file} (${h?.workflowType}): ${result.error.name}: ${result.error.message}`);
    }
    assert.equal(replayed, histories.length, 'a history was not replayed');
    assert.deepEqual(failed, [], `histories that no longer replay once traced:\n${failed.join('\n')}`);
  });

  it('can fail: a payment history against a paymentWorkflow that schedules another activity first', async () => {
    const payment = histories.find((h) => h.workflowType === 'paymentWorkflow');
    assert.ok(payment, 'no paymentWorkflow history recorded');
    await assert.rejects(Worker.runReplayHistory(replayOptions(incompatibleWorkflowsPath), payment.history, payment.workflowId), (err: unknown) => {
      assert.ok(err instanceof DeterminismViolationError, `expected a DeterminismViolationError, got ${String(err)}`);
      return true;
    });
  });
});
