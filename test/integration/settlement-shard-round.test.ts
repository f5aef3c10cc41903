import assert from 'node:assert/strict';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { capturePayments, newParties } from '../helpers/captures.js';
import { pollUntil, world, type World } from '../helpers/world.js';

interface ScheduledActivity {
  type: string;
  batchId: string | undefined;
  scheduledEventId: number;
}

function activities(history: History): { scheduled: ScheduledActivity[]; completedAt: Map<number, number>; continuedAsNew: boolean } {
  const scheduled: ScheduledActivity[] = [];
  let continuedAsNew = false;
  const completedAt = new Map<number, number>();
  for (const e of history.events ?? []) {
    const id = Number(e.eventId);
    const s = e.activityTaskScheduledEventAttributes;
    if (s) {
      const data = s.input?.payloads?.[0]?.data;
      const input = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { batchId?: string }) : {};
      scheduled.push({ type: s.activityType?.name ?? '', batchId: input.batchId, scheduledEventId: id });
    }
    const c = e.activityTaskCompletedEventAttributes;
    if (c) completedAt.set(Number(c.scheduledEventId), id);
    if (e.workflowExecutionContinuedAsNewEventAttributes) continuedAsNew = true;
  }
  return { scheduled, completedAt, continuedAsNew };
}

/** The histories of the shard workflow runs open since `since`. */
async function shardHistories(w: World, since: Date): Promise<History[]> {
  const query = `WorkflowType = 'settlementShardWorkflow' AND (ExecutionStatus = 'Running' OR CloseTime >= '${since.toISOString()}')`;
  const out: History[] = [];
  for await (const info of w.temporal.workflow.list({ query })) out.push(await w.temporal.workflow.getHandle(info.workflowId, info.runId).fetchHistory());
  return out;
}

describe('settlement: a batch end does not hold up the shard\'s next batch', function () {
  this.timeout(120_000);
  let w: World;
  before(async function () {
    w = await world();
  });

  it('the payment workflows are told in an activity of their own, while the shard already gathers its next batch', async function () {
    const since = new Date(Date.now() - 60_000);
    const parties = await newParties(w, 'Shard round');
    const [payment] = await capturePayments(w, parties, [BigInt(321)]);
    const paymentId = (payment as { paymentId: string }).paymentId;
    const batchId = (await pollUntil(w, parties.merchant, paymentId, 'CONFIRMED')).batchId as string;
    // The payment workflow ends once told, so the notification ran.
    assert.equal(((await w.temporal.workflow.getHandle(paymentId).result()) as { status: string }).status, 'CONFIRMED');

    const found = (await shardHistories(w, since)).map(activities).find((h) => h.scheduled.some((a) => a.batchId === batchId && a.type === 'notifyShardBatch'));
    assert.ok(found, `no shard history notified batch ${batchId} in an activity of its own`);
    const end = found.scheduled.find((a) => a.batchId === batchId && a.type === 'endShardBatch');
    const notify = found.scheduled.find((a) => a.batchId === batchId && a.type === 'notifyShardBatch') as ScheduledActivity;
    assert.ok(end && end.scheduledEventId < notify.scheduledEventId, 'the batch is ended before its workflows are told');
    const notifiedAt = found.completedAt.get(notify.scheduledEventId);
    assert.ok(notifiedAt !== undefined, 'the notification completed');
    const next = found.scheduled.find((a) => a.type === 'gatherBatch' && a.scheduledEventId > notify.scheduledEventId);
    if (!next && found.continuedAsNew) return; // the batch was its run's last: the run waited for the notification, then continued as new
    assert.ok(next && next.scheduledEventId < notifiedAt, 'the next gather was scheduled before the notification completed');
  });
});
