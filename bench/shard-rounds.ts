/**
 * Where a settlement shard's round goes, read from the shard workflows' histories after a level:
 * for each activity and for the shard's workflow tasks, how long it waited to start and how long it ran (a loaded shard's rounds
 * follow each other, so these durations bound how many payments it settles per second), and when
 * each batch's confirmation was recorded, to the millisecond.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
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

export interface ShardHistories {
  rounds: ShardRounds;
  /**
   * When each batch's confirmShardBatch completed with `confirmed` (epoch ms), by batchId: the
   * moment polls can see its payments CONFIRMED. A batch record's `confirmedAt` is the block's
   * timestamp, in whole seconds, too coarse to time rounds of one to three seconds.
   */
  confirmedAtMs: Map<string, number>;
}

const CONFIRM_ACTIVITY = 'confirmShardBatch';
/** The shard's own workflow tasks, reported beside its activities: a round has one after each step. */
const WORKFLOW_TASK = 'workflow task';

export async function readShardHistories(client: Client, since: Date, until: Date): Promise<ShardHistories> {
  const runs: { workflowId: string; runId: string }[] = [];
  const query = `WorkflowType = 'settlementShardWorkflow' AND (ExecutionStatus = 'Running' OR CloseTime >= '${since.toISOString()}')`;
  for await (const info of client.workflow.list({ query })) runs.push({ workflowId: info.workflowId, runId: info.runId });
  const sums = new Map<string, { count: number; wait: number; run: number; max: number }>();
  const confirmedAtMs = new Map<string, number>();
  const add = (type: string, waitMs: number, runMs: number) => {
    const sum = sums.get(type) ?? { count: 0, wait: 0, run: 0, max: 0 };
    sum.count += 1;
    sum.wait += waitMs;
    sum.run += runMs;
    sum.max = Math.max(sum.max, runMs);
    sums.set(type, sum);
  };
  await mapPool(runs, 4, async (r) => {
    const history = await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory();
    const scheduled = new Map<string, { type: string; at: number; batchId: string | null }>();
    const started = new Map<string, number>();
    for (const e of history.events ?? []) {
      const at = optionalTsToMs(e.eventTime) ?? Number.NaN;
      const id = String(e.eventId);
      if (e.activityTaskScheduledEventAttributes) {
        const a = e.activityTaskScheduledEventAttributes;
        const type = a.activityType?.name ?? '?';
        scheduled.set(id, { type, at, batchId: type === CONFIRM_ACTIVITY ? stringField(a.input?.payloads?.[0], 'batchId') : null });
      } else if (e.workflowTaskScheduledEventAttributes) {
        scheduled.set(id, { type: WORKFLOW_TASK, at, batchId: null });
      } else if (e.workflowTaskStartedEventAttributes) {
        started.set(String(e.workflowTaskStartedEventAttributes.scheduledEventId), at);
      } else if (e.workflowTaskCompletedEventAttributes) {
        const done = e.workflowTaskCompletedEventAttributes;
        const s = scheduled.get(String(done.scheduledEventId));
        const st = started.get(String(done.scheduledEventId));
        if (s && st !== undefined && s.at >= since.getTime() && at <= until.getTime()) add(s.type, st - s.at, at - st);
      } else if (e.activityTaskStartedEventAttributes) {
        started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), at);
      } else if (e.activityTaskCompletedEventAttributes) {
        const done = e.activityTaskCompletedEventAttributes;
        const key = String(done.scheduledEventId);
        const s = scheduled.get(key);
        const st = started.get(key);
        if (s?.batchId && stringField(done.result?.payloads?.[0], 'status') === 'confirmed') {
          const earlier = confirmedAtMs.get(s.batchId);
          if (earlier === undefined || at < earlier) confirmedAtMs.set(s.batchId, at);
        }
        if (!s || st === undefined || s.at < since.getTime() || at > until.getTime()) continue;
        add(s.type, st - s.at, at - st);
      }
    }
  });
  const activities: Record<string, ActivityTimes> = {};
  for (const [type, s] of sums) activities[type] = { count: s.count, waitMs: s.wait / s.count, runMs: s.run / s.count, maxRunMs: s.max };
  return { rounds: { activities }, confirmedAtMs };
}

/** A string field of an activity's argument or result, as the SDK's default converter decodes it. */
function stringField(payload: Payload | null | undefined, field: 'batchId' | 'status'): string | null {
  if (!payload) return null;
  let value: unknown;
  try {
    value = defaultPayloadConverter.fromPayload(payload);
  } catch {
    return null;
  }
  const v = value && typeof value === 'object' ? (value as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' ? v : null;
}
