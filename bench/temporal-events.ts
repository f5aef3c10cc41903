/**
 * Temporal history events a payment costs: its own workflow's history (sampled), plus its share of
 * the settlement workflows' events (shards or the batcher). Those run for long and continue as new,
 * so their cost over a level is the growth of every run that was open at the start or started
 * since, read from history lengths before and after.
 */
import type { Client } from '@temporalio/client';
import { mapPool, mean } from './stats.js';

export const SETTLEMENT_WORKFLOW_TYPES = ['settlementShardWorkflow', 'batcherWorkflow'] as const;

const typeFilter = `(${SETTLEMENT_WORKFLOW_TYPES.map((t) => `WorkflowType = '${t}'`).join(' OR ')})`;
const MAX_RUNS = 1000;

/** History length of each settlement run, by `workflowId/runId`. */
export type SettlementRuns = Map<string, number>;

async function lengths(client: Client, query: string): Promise<SettlementRuns> {
  const runs: { workflowId: string; runId: string }[] = [];
  for await (const info of client.workflow.list({ query })) {
    runs.push({ workflowId: info.workflowId, runId: info.runId });
    if (runs.length >= MAX_RUNS) break;
  }
  const out: SettlementRuns = new Map();
  await mapPool(runs, 8, async (r) => {
    try {
      const d = await client.workflow.getHandle(r.workflowId, r.runId).describe();
      out.set(`${r.workflowId}/${r.runId}`, d.historyLength);
    } catch {
      // a run that vanished (retention) counts as nothing
    }
  });
  return out;
}

/** The settlement runs open now, with their history lengths. */
export function settlementRunsNow(client: Client): Promise<SettlementRuns> {
  return lengths(client, `${typeFilter} AND ExecutionStatus = 'Running'`);
}

/** Events the settlement workflows added since `before` was taken at `since`. */
export async function settlementEventsSince(client: Client, before: SettlementRuns, since: Date): Promise<{ events: number; runs: number }> {
  const after = await lengths(client, `${typeFilter} AND (ExecutionStatus = 'Running' OR CloseTime >= '${since.toISOString()}' OR StartTime >= '${since.toISOString()}')`);
  let events = 0;
  for (const [run, len] of after) events += len - (before.get(run) ?? 0);
  return { events, runs: after.size };
}

/** Mean history length of up to `sample` payment workflows (workflow id = paymentId). */
export async function paymentHistoryEvents(client: Client, paymentIds: readonly string[], sample = 20): Promise<{ mean: number; sampled: number }> {
  const step = Math.max(1, Math.floor(paymentIds.length / sample));
  const picked = paymentIds.filter((_, i) => i % step === 0).slice(0, sample);
  const counts: number[] = [];
  await mapPool(picked, 4, async (id) => {
    try {
      const h = await client.workflow.getHandle(id).fetchHistory();
      counts.push(h.events?.length ?? 0);
    } catch {
      // not started (yet): not part of the sample
    }
  });
  return { mean: mean(counts), sampled: counts.length };
}
