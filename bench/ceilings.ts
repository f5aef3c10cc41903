import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { World } from '../tools/harness/world.js';
import { mapPool, mean } from './stats.js';

export interface Ceilings {
  storeInsertsPerSecond: number;
  storeReadsPerSecond: number;
  workflowStartsPerSecond: number;
  /** start -> one signal -> completion of a workflow that does nothing else, on the bench's own worker. */
  signalWorkflowsPerSecond: number;
  /** The same workflow started with its first task delayed, then ended by a signal-with-start (one workflow task, as payments run). */
  delayedSignalWorkflowsPerSecond: number;
  /**
   * Each measurement behind the two signal ceilings, in run order: before the levels and, when the
   * bench re-measured them (remeasureTemporalCeilings), after the sweep. The ceilings are their means.
   */
  samples?: { when: string; signalWorkflowsPerSecond: number; delayedSignalWorkflowsPerSecond: number; quiet?: PipelineQuiet }[];
  httpRequestsPerSecond: number;
  /** Bundling the tiny workflow file and starting the worker (not part of the rate). */
  workerStartSeconds: number;
}

export interface CeilingSizes {
  inserts: number;
  starts: number;
  signalWorkflows: number;
  httpRequests: number;
}

export const FULL_CEILINGS: CeilingSizes = { inserts: 2000, starts: 500, signalWorkflows: 500, httpRequests: 3000 };
export const QUICK_CEILINGS: CeilingSizes = { inserts: 1000, starts: 300, signalWorkflows: 200, httpRequests: 1500 };

async function rate(n: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await mapPool(Array.from({ length: n }, (_, i) => i), concurrency, (i) => op(i));
  return n / ((performance.now() - t0) / 1000);
}

/**
 * What each part can do alone on this machine, at 10 in flight (100 for the signal workflows, which wait on their own completion): the
 * store's unique inserts and _id reads, Temporal workflow starts with no worker, a minimal
 * start -> signal -> complete workflow on a worker of the bench's own (own task queue, same
 * Temporal), and the API's cheapest route.
 */
export async function measureCeilings(w: World, baseUrl: string, sizes: CeilingSizes = FULL_CEILINGS): Promise<Ceilings> {
  const col = w.store.db.collection<{ _id: string; at: Date }>('bench_ceiling');
  const ids = Array.from({ length: sizes.inserts }, () => randomUUID());
  const storeInsertsPerSecond = await rate(ids.length, 10, (i) => col.insertOne({ _id: ids[i] as string, at: new Date() }));
  const storeReadsPerSecond = await rate(ids.length, 10, (i) => col.findOne({ _id: ids[i] as string }));
  await col.drop();

  // Starts of a workflow type on a task queue no worker polls: the server's cost of a start alone.
  const idle = `bench-ceiling-${randomUUID()}`;
  const started: string[] = [];
  const workflowStartsPerSecond = await rate(sizes.starts, 10, async () => {
    const id = `bench-ceiling-${randomUUID()}`;
    await w.temporal.workflow.start('benchCeilingWorkflow', { workflowId: id, taskQueue: idle, args: [] });
    started.push(id);
  });
  await mapPool(started, 10, (id) => w.temporal.workflow.getHandle(id).terminate('bench ceiling probe'));

  const { perSecond: signalWorkflowsPerSecond, delayedPerSecond: delayedSignalWorkflowsPerSecond, startSeconds: workerStartSeconds } = await signalWorkflowCeiling(w, sizes.signalWorkflows);

  const httpRequestsPerSecond = await rate(sizes.httpRequests, 10, async () => {
    const res = await fetch(`${baseUrl}/facilitator/supported`);
    await res.arrayBuffer();
  });
  return {
    storeInsertsPerSecond,
    storeReadsPerSecond,
    workflowStartsPerSecond,
    signalWorkflowsPerSecond,
    delayedSignalWorkflowsPerSecond,
    samples: [{ when: 'before the levels', signalWorkflowsPerSecond, delayedSignalWorkflowsPerSecond }],
    httpRequestsPerSecond,
    workerStartSeconds,
  };
}

/** How long the bench waited for the product's payment workflows to finish, and how many still ran when it stopped waiting. */
export interface PipelineQuiet {
  waitedMs: number;
  runningPaymentWorkflows: number;
}

const RUNNING_PAYMENT_WORKFLOWS = `WorkflowType IN ('paymentWorkflowV2', 'paymentWorkflow') AND ExecutionStatus = 'Running'`;

/**
 * Waits, at most maxMs, until no payment workflow runs. A level ends when its payments are
 * CONFIRMED, which a batch's record says before the payments' workflows are told and complete
 * (spread over SETTLEMENT_NOTIFY_SPREAD_MS, behind the worker's other work); a ceiling measured
 * while they still run measures Temporal shared with the product, not Temporal alone.
 */
export async function waitForQuietPipeline(w: World, maxMs: number): Promise<PipelineQuiet> {
  const t0 = performance.now();
  for (;;) {
    const { count } = await w.temporal.workflow.count(RUNNING_PAYMENT_WORKFLOWS);
    const waitedMs = performance.now() - t0;
    if (count === 0 || waitedMs >= maxMs) return { waitedMs, runningPaymentWorkflows: count };
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Measures the two Temporal signal ceilings again (`when` names the moment) and returns the
 * ceilings with them averaged over every sample: a ratio to one short sample taken before the
 * levels, on a near-empty Temporal database, moved with that sample alone (48-70/s between runs
 * of one build on one machine).
 */
export async function remeasureTemporalCeilings(w: World, ceilings: Ceilings, n: number, when: string, quiet?: PipelineQuiet): Promise<Ceilings> {
  const again = await signalWorkflowCeiling(w, n);
  const samples = [...(ceilings.samples ?? []), { when, signalWorkflowsPerSecond: again.perSecond, delayedSignalWorkflowsPerSecond: again.delayedPerSecond, ...(quiet ? { quiet } : {}) }];
  return {
    ...ceilings,
    signalWorkflowsPerSecond: mean(samples.map((s) => s.signalWorkflowsPerSecond)),
    delayedSignalWorkflowsPerSecond: mean(samples.map((s) => s.delayedSignalWorkflowsPerSecond)),
    samples,
  };
}

async function signalWorkflowCeiling(w: World, n: number): Promise<{ perSecond: number; delayedPerSecond: number; startSeconds: number }> {
  const taskQueue = `bench-signal-${randomUUID()}`;
  const t0 = performance.now();
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // installed already
  }
  const connection = await NativeConnection.connect({ address: w.env.TEMPORAL_ADDRESS as string });
  try {
    const worker = await Worker.create({
      connection,
      namespace: w.temporal.options.namespace,
      taskQueue,
      workflowsPath: fileURLToPath(new URL('./ceiling-workflows.js', import.meta.url)),
    });
    const startSeconds = (performance.now() - t0) / 1000;
    const [perSecond, delayedPerSecond] = await worker.runUntil(async () => [
      await rate(n, 100, async () => {
        const h = await w.temporal.workflow.start('benchSignalWorkflow', { workflowId: `bench-signal-${randomUUID()}`, taskQueue, args: [] });
        await h.signal('benchGo');
        await h.result();
      }),
      await rate(n, 100, async () => {
        const options = { workflowId: `bench-delayed-${randomUUID()}`, taskQueue, args: [] };
        await w.temporal.workflow.start('benchSignalWorkflow', { ...options, startDelay: '1 hour' });
        const h = await w.temporal.workflow.signalWithStart('benchSignalWorkflow', { ...options, signal: 'benchGo', signalArgs: [] });
        await h.result();
      }),
    ]);
    return { perSecond, delayedPerSecond, startSeconds };
  } finally {
    await connection.close();
  }
}
