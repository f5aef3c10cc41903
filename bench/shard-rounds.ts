/**
 * Where a settlement shard's round goes: for each activity the shard workflows ran during a level,
 * how long it waited to start and how long it ran, read from their histories. A loaded shard's
 * rounds follow each other, so these durations bound how many payments it settles per second.
 */
import type { Client } from '@temporalio/client';
import { mapPool } from './stats.js';

export interface ActivityTimes {
  count: number;
  /** Mean milliseconds from scheduled to started (queueing at the worker). */
  waitMs: number;
  /** Mean and longest milliseconds from started to completed. */
  runMs: number;
  maxRunMs: number;
}

/** By activity type; `betweenMs` is the mean time from an activity's completion to the next one's scheduling (a workflow task). */
export interface ShardRounds {
  activities: Record<string, ActivityTimes>;
  betweenMs: number;
}

interface Timestamp {
  seconds?: { toNumber(): number } | number | null;
  nanos?: number | null;
}

const ms = (t: Timestamp | null | undefined): number => {
  if (!t) return Number.NaN;
  const s = typeof t.seconds === 'number' ? t.seconds : (t.seconds?.toNumber() ?? 0);
  return s * 1000 + (t.nanos ?? 0) / 1e6;
};

export async function shardRoundsSince(client: Client, since: Date, until: Date): Promise<ShardRounds> {
  const runs: { workflowId: string; runId: string }[] = [];
  const query = `WorkflowType = 'settlementShardWorkflow' AND (ExecutionStatus = 'Running' OR CloseTime >= '${since.toISOString()}')`;
  for await (const info of client.workflow.list({ query })) runs.push({ workflowId: info.workflowId, runId: info.runId });
  const sums = new Map<string, { count: number; wait: number; run: number; max: number }>();
  let between = 0;
  let betweenCount = 0;
  await mapPool(runs, 4, async (r) => {
    const history = await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory();
    const scheduled = new Map<string, { type: string; at: number }>();
    const started = new Map<string, number>();
    let lastCompleted: number | undefined;
    for (const e of history.events ?? []) {
      const at = ms(e.eventTime as Timestamp);
      const id = String(e.eventId);
      if (e.activityTaskScheduledEventAttributes) {
        scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
        if (lastCompleted !== undefined && at >= since.getTime() && at <= until.getTime()) {
          between += at - lastCompleted;
          betweenCount += 1;
        }
        lastCompleted = undefined;
      } else if (e.activityTaskStartedEventAttributes) {
        started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), at);
      } else if (e.activityTaskCompletedEventAttributes) {
        const key = String(e.activityTaskCompletedEventAttributes.scheduledEventId);
        const s = scheduled.get(key);
        const st = started.get(key);
        lastCompleted = at;
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
  return { activities, betweenMs: betweenCount ? between / betweenCount : Number.NaN };
}
