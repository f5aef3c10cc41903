/**
 * Where a settlement shard's round goes: for each activity the shard workflows ran during a level,
 * how long it waited to start and how long it ran, read from their histories. A loaded shard's
 * rounds follow each other, so these durations bound how many payments it settles per second.
 */
import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time.js';
import { mapPool } from './stats.js';

export interface ActivityTimes {
  count: number;
  /** Mean milliseconds from scheduled to started (queueing at the worker). */
  waitMs: number;
  /** Mean and longest milliseconds from started to completed. */
  runMs: number;
  maxRunMs: number;
}

/** By activity type. */
export interface ShardRounds {
  activities: Record<string, ActivityTimes>;
}

export async function shardRoundsSince(client: Client, since: Date, until: Date): Promise<ShardRounds> {
  const runs: { workflowId: string; runId: string }[] = [];
  const query = `WorkflowType = 'settlementShardWorkflow' AND (ExecutionStatus = 'Running' OR CloseTime >= '${since.toISOString()}')`;
  for await (const info of client.workflow.list({ query })) runs.push({ workflowId: info.workflowId, runId: info.runId });
  const sums = new Map<string, { count: number; wait: number; run: number; max: number }>();
  await mapPool(runs, 4, async (r) => {
    const history = await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory();
    const scheduled = new Map<string, { type: string; at: number }>();
    const started = new Map<string, number>();
    for (const e of history.events ?? []) {
      const at = optionalTsToMs(e.eventTime) ?? Number.NaN;
      const id = String(e.eventId);
      if (e.activityTaskScheduledEventAttributes) {
        scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
      } else if (e.activityTaskStartedEventAttributes) {
        started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), at);
      } else if (e.activityTaskCompletedEventAttributes) {
        const key = String(e.activityTaskCompletedEventAttributes.scheduledEventId);
        const s = scheduled.get(key);
        const st = started.get(key);
        if (!s || st === undefined || s.at < since.getTime() || at > until.getTime()) continue;
        const sum = sums.get(s.type) ?? { count: 0, wait: 0, run: 0, max: 0 };
        sum.count += 1;
        sum.wait += st - s.at;
        sum.run += at - st;
        sum.max = Math.max(sum.max, at - st);
        sums.set(s.type, sum);
      }
    }
  });
  const activities: Record<string, ActivityTimes> = {};
  for (const [type, s] of sums) activities[type] = { count: s.count, waitMs: s.wait / s.count, runMs: s.run / s.count, maxRunMs: s.max };
  return { activities };
}
