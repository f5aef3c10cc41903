import { randomUUID } from 'node:crypto';
import type { World } from '../test/helpers/world.js';
import { mapPool } from './stats.js';

export interface Ceilings {
  storeInsertsPerSecond: number;
  storeReadsPerSecond: number;
  workflowStartsPerSecond: number;
  httpRequestsPerSecond: number;
}

async function rate(n: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await mapPool(Array.from({ length: n }, (_, i) => i), concurrency, (i) => op(i));
  return n / ((performance.now() - t0) / 1000);
}

/**
 * What each dependency can do alone on this machine, at 10 in flight: the store's unique inserts
 * and _id reads, Temporal workflow starts, and the API's cheapest route. A capture needs several
 * of each, which bounds captures per second from above.
 */
export async function measureCeilings(w: World, baseUrl: string): Promise<Ceilings> {
  const col = w.store.db.collection<{ _id: string; at: Date }>('bench_ceiling');
  const ids = Array.from({ length: 2000 }, () => randomUUID());
  const storeInsertsPerSecond = await rate(ids.length, 10, (i) => col.insertOne({ _id: ids[i] as string, at: new Date() }));
  const storeReadsPerSecond = await rate(ids.length, 10, (i) => col.findOne({ _id: ids[i] as string }));
  await col.drop();

  // Starts of a workflow type on a task queue no worker polls: the server's cost of a start alone.
  const queue = `bench-ceiling-${randomUUID()}`;
  const started: string[] = [];
  const workflowStartsPerSecond = await rate(500, 10, async () => {
    const id = `bench-ceiling-${randomUUID()}`;
    await w.temporal.workflow.start('benchCeilingWorkflow', { workflowId: id, taskQueue: queue, args: [] });
    started.push(id);
  });
  await mapPool(started, 10, (id) => w.temporal.workflow.getHandle(id).terminate('bench ceiling probe'));

  const httpRequestsPerSecond = await rate(3000, 10, async () => {
    const res = await fetch(`${baseUrl}/facilitator/supported`);
    await res.arrayBuffer();
  });
  return { storeInsertsPerSecond, storeReadsPerSecond, workflowStartsPerSecond, httpRequestsPerSecond };
}
