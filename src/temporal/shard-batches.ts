import type { Client } from '@temporalio/client';

/**
 * The batch ids the running settlement shard workflows know: every batch id their current runs
 * scheduled a step for. A shard ends each batch before its next round and before continuing as
 * new, so a batch a current run does not name is one no shard will finish (its gather was lost,
 * e.g. with a Temporal restored older than the store). Read from the histories: no worker needed.
 */
export async function batchIdsOfRunningShards(temporal: Client): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const info of temporal.workflow.list({ query: "WorkflowType = 'settlementShardWorkflow' AND ExecutionStatus = 'Running'" })) {
    const history = await temporal.workflow.getHandle(info.workflowId, info.runId).fetchHistory();
    for (const e of history.events ?? []) {
      const data = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data;
      if (!data) continue;
      try {
        const input = JSON.parse(Buffer.from(data).toString('utf8')) as { batchId?: unknown };
        if (typeof input.batchId === 'string') ids.add(input.batchId);
      } catch {
        // not JSON: not a shard step's input
      }
    }
  }
  return ids;
}
