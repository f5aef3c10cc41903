/**
 * Records workflow histories from a running Temporal server as replay fixtures for
 * test/unit/workflow-replay.test.ts.
 *
 *   npm run build
 *   TEMPORAL_ADDRESS=127.0.0.1:7233 node dist/test/replay/record-histories.js
 *
 * Settings (environment):
 *   TEMPORAL_ADDRESS      frontend, default 127.0.0.1:7233
 *   TEMPORAL_NAMESPACE    default "default"
 *   REPLAY_OUT            output folder, default <project>/test/replay/histories
 *   REPLAY_TYPES          comma list of workflow types to keep (default: all)
 *   REPLAY_WORKFLOW_IDS   comma list of workflow ids: record exactly these (every run kept by the server)
 *   REPLAY_PER_GROUP      at most this many histories per (type, status), default 3, of distinct
 *                         event counts from the longest to the shortest
 *   REPLAY_MAX_EVENTS     a longer history is cut after a WorkflowTaskStarted event (a valid
 *                         in-flight shape), default 400, so fixtures stay small
 *   REPLAY_SOURCE         free text saved with each entry: the commit and scenario recorded
 *   REPLAY_CLEAN=1        empty the output folder first; otherwise histories are added to it
 *                         (a runId already recorded is skipped), so several stacks can be recorded
 *
 * Each history is written as <workflowType>-<n>.json, proto3 JSON as `temporal workflow show -o json`
 * writes it (see history-json.ts for why not the SDK's historyToJSON). The workflow id, run id,
 * status and event count of each file go to test/replay/manifest.json, beside the folder (the
 * replay test reads it for the workflow ids).
 *
 * How the committed set was made (from the code to protect, here d2f7305, in a worktree):
 *   git worktree add /tmp/old <commit> && cd /tmp/old && npm install && npm run build
 *   1. Old mocha with a custom config listing agents-onboarding, agents-repayment and
 *      agents-payments (+ dist/test/support/hooks.js), run with TEST_KEEP_DATA=1: the test stack's
 *      data dir (printed at the end) keeps temporal.db. For a spend intent that returns
 *      "consumed", run agents-payments with SPEND_INTENT_TTL_SECONDS=10 CLOCK_SKEW_SECONDS=1 and a
 *      last spec file that waits 16 s, then record it with REPLAY_WORKFLOW_IDS.
 *   2. The old stack, `node dist/tools/stack/start.js` with DATA_DIR and free ports, DEV_TOOLS=true
 *      CONFIRMATIONS=2 (a batch confirms only when a block is mined: `evm_mine` on anvil, so a
 *      payment can be left SUBMITTED), the README walkthrough a few times, then one more capture
 *      left SUBMITTED and one QUEUED, and Ctrl-C (SIGINT) the stack: those stay open.
 *   Then, for each data dir, a bare Temporal server on its file and this script:
 *     ~/.cache/credit-facilitator/bin/temporal server start-dev --headless --ip 127.0.0.1 --port 27433 \
 *       --db-filename <dir>/temporal.db --search-attribute MerchantId=Keyword \
 *       --search-attribute BorrowerId=Keyword --search-attribute PaymentStatus=Keyword \
 *       --search-attribute BatchId=Keyword &
 *     TEMPORAL_ADDRESS=127.0.0.1:27433 REPLAY_PER_GROUP=6 REPLAY_SOURCE='<commit>: <scenario>' \
 *       node dist/test/replay/record-histories.js
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { projectRoot } from '../../src/config/paths.js';
import { historyToJson } from './history-json.js';

interface ManifestEntry {
  file: string;
  workflowType: string;
  workflowId: string;
  runId: string;
  status: string;
  events: number;
  /** Events in the server's history when recorded, if the file holds only a prefix. */
  truncatedFrom?: number;
  /** What the history shows, added by hand after recording. */
  note?: string;
  /** REPLAY_SOURCE: the commit and scenario that produced it. */
  source?: string;
  recordedAt: string;
}

type HistoryEvent = NonNullable<History['events']>[number];
const WORKFLOW_TASK_STARTED = 6; // EVENT_TYPE_WORKFLOW_TASK_STARTED

function manifestPath(outDir: string): string {
  return join(dirname(resolve(outDir)), 'manifest.json');
}

function readManifest(outDir: string): ManifestEntry[] {
  const path = manifestPath(outDir);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as ManifestEntry[]) : [];
}

/** The longest prefix of at most `max` events that ends right after a WorkflowTaskStarted event. */
function cut(events: HistoryEvent[], max: number): HistoryEvent[] {
  if (events.length <= max) return events;
  for (let i = max - 1; i > 0; i--) {
    if (Number(events[i]?.eventType) === WORKFLOW_TASK_STARTED) return events.slice(0, i + 1);
  }
  return events;
}

/** `k` items of `sorted`, evenly spaced, first and last included. */
function spread<T>(sorted: T[], k: number): T[] {
  if (k >= sorted.length) return sorted;
  if (k <= 1) return sorted.slice(0, k);
  const idx = new Set<number>();
  for (let i = 0; i < k; i++) idx.add(Math.round((i * (sorted.length - 1)) / (k - 1)));
  return [...idx].map((i) => sorted[i]!);
}

/** How many executions per (type, status) are fetched to choose from. */
const SCAN_PER_GROUP = 50;

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  const outDir = resolve(process.env.REPLAY_OUT ?? join(projectRoot(), 'test', 'replay', 'histories'));
  const types = process.env.REPLAY_TYPES ? new Set(process.env.REPLAY_TYPES.split(',').map((t) => t.trim())) : null;
  const ids = process.env.REPLAY_WORKFLOW_IDS ? new Set(process.env.REPLAY_WORKFLOW_IDS.split(',').map((t) => t.trim())) : null;
  const perGroup = Number(process.env.REPLAY_PER_GROUP ?? 3);
  const maxEvents = Number(process.env.REPLAY_MAX_EVENTS ?? 400);

  if (process.env.REPLAY_CLEAN === '1') {
    rmSync(outDir, { recursive: true, force: true });
    rmSync(manifestPath(outDir), { force: true });
  }
  mkdirSync(outDir, { recursive: true });
  const manifest = readManifest(outDir);
  const recorded = new Set(manifest.map((m) => m.runId));
  const nextIndex = (type: string) => {
    const used = new Set(readdirSync(outDir));
    let n = 1;
    while (used.has(`${type}-${n}.json`)) n++;
    return n;
  };

  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    // Per (type, status), up to perGroup histories of distinct lengths spread from the longest to
    // the shortest: different lengths are different points of the code (the visibility store's
    // historyLength is 0 while a workflow runs, so the histories are fetched to count).
    const groups = new Map<string, WorkflowExecutionInfo[]>();
    for await (const wf of client.workflow.list()) {
      if (types && !types.has(wf.type)) continue;
      if (ids && !ids.has(wf.workflowId)) continue;
      if (recorded.has(wf.runId)) continue;
      const group = `${wf.type}/${wf.status.name}`;
      const list = groups.get(group) ?? [];
      if (list.length < SCAN_PER_GROUP) groups.set(group, [...list, wf]);
    }
    const chosen: { wf: WorkflowExecutionInfo; all: HistoryEvent[] }[] = [];
    for (const list of groups.values()) {
      const byLength = new Map<number, { wf: WorkflowExecutionInfo; all: HistoryEvent[] }>();
      for (const wf of list) {
        const all = (await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()).events ?? [];
        if (ids) chosen.push({ wf, all });
        else if (!byLength.has(all.length)) byLength.set(all.length, { wf, all });
      }
      const distinct = [...byLength.keys()].sort((x, y) => y - x);
      for (const n of spread(distinct, perGroup)) chosen.push(byLength.get(n)!);
    }
    for (const { wf, all } of chosen) {
      const status = wf.status.name;
      const events = cut(all, maxEvents);
      const file = `${wf.type}-${nextIndex(wf.type)}.json`;
      const json = historyToJson({ events });
      writeFileSync(join(outDir, file), json + '\n');
      manifest.push({
        file,
        workflowType: wf.type,
        workflowId: wf.workflowId,
        runId: wf.runId,
        status,
        events: events.length,
        ...(events.length < all.length ? { truncatedFrom: all.length } : {}),
        ...(process.env.REPLAY_SOURCE ? { source: process.env.REPLAY_SOURCE } : {}),
        recordedAt: new Date().toISOString(),
      });
      recorded.add(wf.runId);
      process.stdout.write(`${file}: ${wf.type} ${wf.workflowId} ${status} ${events.length}${events.length < all.length ? `/${all.length}` : ''} events, ${json.length} bytes\n`);
    }
  } finally {
    await connection.close();
  }
  manifest.sort((a, b) => a.file.localeCompare(b.file, 'en', { numeric: true }));
  writeFileSync(manifestPath(outDir), JSON.stringify(manifest, null, 2) + '\n');
}

await main();
