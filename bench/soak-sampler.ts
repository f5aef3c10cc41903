/**
 * What the soak watches, per process and for the stack: resident memory and open file descriptors
 * from /proc, the Node processes' heap from their metrics endpoints, the store's and Temporal's
 * files on disk, and the settlement shards' history length and runs (continue-as-new).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { scrapeCounter, total } from './prom.js';

export interface ProcessRef {
  name: string;
  pid: number;
}

export interface StackSample {
  rssMb: Record<string, number>;
  fds: Record<string, number>;
  heapMb: Record<string, number>;
  storeMb: number;
  temporalDbMb: number;
  /** History length of each settlement shard's current run. */
  shardHistory: Record<string, number>;
  /** Runs of the settlement shards so far (one more per continue-as-new). */
  shardRuns: number;
}

function rssMb(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return Number.NaN;
  }
}

/** Bytes under `path` (files directly in it, or the file itself). */
function sizeMb(path: string): number {
  try {
    const st = statSync(path);
    if (st.isFile()) return st.size / 2 ** 20;
    return readdirSync(path).reduce((s, f) => s + (statSync(join(path, f)).isFile() ? statSync(join(path, f)).size : 0), 0) / 2 ** 20;
  } catch {
    return Number.NaN;
  }
}

export async function sampleStack(o: {
  processes: readonly ProcessRef[];
  /** Node processes' metrics endpoints, by process name. */
  metrics: Record<string, string>;
  dataDir: string;
  temporal: Client;
}): Promise<StackSample> {
  const heapMb: Record<string, number> = {};
  await Promise.all(
    Object.entries(o.metrics).map(async ([name, url]) => {
      const heap = await scrapeCounter([url], 'x402_process_nodejs_heap_size_used_bytes', 'none');
      heapMb[name] = heap ? total(heap) / 2 ** 20 : Number.NaN;
    }),
  );
  const shardHistory: Record<string, number> = {};
  let shardRuns = 0;
  const running: string[] = [];
  for await (const info of o.temporal.workflow.list({ query: `WorkflowType = 'settlementShardWorkflow'` })) {
    shardRuns++;
    if (info.status.name === 'RUNNING') running.push(info.workflowId);
  }
  // The visibility store records a run's history length when it closes; describe has the live one.
  await Promise.all(
    running.map(async (id) => {
      const d = await o.temporal.workflow.getHandle(id).describe().catch(() => null);
      shardHistory[id] = d?.historyLength ?? Number.NaN;
    }),
  );
  return {
    rssMb: Object.fromEntries(o.processes.map((p) => [p.name, rssMb(p.pid)])),
    fds: Object.fromEntries(o.processes.map((p) => [p.name, fdCount(p.pid)])),
    heapMb,
    storeMb: sizeMb(join(o.dataDir, 'ferretdb')),
    temporalDbMb: sizeMb(join(o.dataDir, 'temporal.db')),
    shardHistory,
    shardRuns,
  };
}
