import type { Client } from '@temporalio/client';
import { settledContentOf, submitSettleBatch, type ConfirmationProgress, type SettlementItem } from '../chain/settlement.js';
import type { WorkerMetrics } from '../observability/metrics.js';
import type { BatchOutcome } from '../domain/payment.js';
import { batchClaimSize, gatherWaitMs } from '../domain/gather-wait.js';
import { ledgerLineOf } from '../domain/payment-ledger.js';
import { closeHoldsOfBorrowers } from '../store/borrowers.js';
import type { SettlementQueueDoc } from '../store/documents.js';
import { recordLedgerLines } from '../store/payment-ledger.js';
import { findByIds } from '../store/find-by-ids.js';
import { countQueued, enqueueEntryOnce, queueEntryOf, queuesServedBy, readQueues, removeFromQueues } from '../store/settlement/queue.js';
import { claimForBatch, findClaim, isVoidClaim, releaseClaims } from '../store/settlement/claims.js';
import { recordBatch } from '../store/settlement/batches.js';
import { announceBatch, type AnnouncedBoards, recordShardBacklog } from '../store/settlement/board.js';
import { batchSetIds, decideBatchSet, findBatchSet } from '../store/settlement/batch-sets.js';
import { sortForeignClaims } from './foreign-claims.js';
import type { PaymentWorkflowInput } from '../temporal/definitions.js';
import { DEFAULT_WEBHOOK_RETRY, emitWebhookEvents } from '../webhooks/emit.js';
import type { AcceptedCaptures } from './accepted-captures.js';
import { confirmOnChain } from './confirm-batch.js';
import { finishVoid } from './finish-void.js';
import { notifyPayments } from './notify-payments.js';
import { outcomeEvents } from './outcome-events.js';
import { finalReceipt } from './receipt.js';
import type { ConfirmationResult, SettlementDeps } from './settings.js';
import { linksTo, whenTraced } from '../observability/tracing.js';

export interface ShardDeps extends SettlementDeps {
  temporal: Client;
  taskQueue: string;
  /** Retry policy of the webhook deliveries a batch end starts. */
  webhooks?: { retry: { initialMs: number; maxMs: number } };
  /** Which queue entries are accepted captures (their spend intent consumed by them); shared with the sweeper. */
  accepted: AcceptedCaptures;
  /** Told each shard's queue length as it is reported (the worker's backlog priority). */
  onBacklog?: (shard: number, pending: number) => void;
}

export interface ShardBatchRef {
  shard: number;
  batchId: string;
  paymentIds: string[];
  queues: number[];
}

/** What a long shard step needs from the activity running it: liveness, a cancellable sleep, a log. */
export interface StepContext {
  heartbeat(details?: unknown): void;
  sleep(ms: number): Promise<void>;
  log(msg: string, fields: Record<string, unknown>): void;
}

const IDLE_RETURN_MS = 60_000;
/** Batches whose entries a worker keeps between their steps (a shard has at most two open: one settling, one notifying). */
const MAX_CACHED_BATCHES = 32;
const BACKLOG_REPORT_MS = 1_000;

/**
 * One settlement shard's steps, from gathering a batch out of its queues to the batch's end; the
 * shard workflow (workflows/settlement-shard.ts) runs each as an activity.
 */
export function createShardSettlement(deps: ShardDeps) {
  const c = deps.store.c;
  // A batch's queue entries from gathering to its end, so submit and end need not read them again.
  // A worker restart loses it; batchItems then reads the queues (or the payments) instead.
  const items = new Map<string, SettlementQueueDoc[]>();
  // A batch's notification may run on another worker, which leaves this one's entry behind: the
  // oldest go once more than a few batches are cached (a later use reads them back, as after a restart).
  const remember = (batchId: string, entries: SettlementQueueDoc[]) => {
    items.set(batchId, entries);
    for (const old of items.keys()) {
      if (items.size <= MAX_CACHED_BATCHES) break;
      items.delete(old);
    }
  };
  const boards: AnnouncedBoards = new Map();

  // Every step reports its shard's queue length (at most once a second per shard and process), so
  // admission's backlog bound holds while a batch is submitted, confirmed or ended, not only while
  // the shard gathers; a shard silent for 30 s with a queue counts as over it (readSettlementBoard).
  const reportedAt = new Map<number, number>();
  async function reportBacklog(shard: number, queues: readonly number[], entries?: number): Promise<void> {
    const now = Date.now();
    if (now - (reportedAt.get(shard) ?? 0) < BACKLOG_REPORT_MS) return;
    reportedAt.set(shard, now);
    const pending = entries ?? (await countQueued(c, queues));
    deps.metrics?.settlementBacklog.set({ shard: String(shard) }, pending);
    deps.onBacklog?.(shard, pending);
    await recordShardBacklog(c, shard, pending);
  }

  /**
   * The batch's decided set (store/settlement/batch-sets.ts), the only answer any step uses: the cache holds
   * only what a set said. A batch gathered before sets existed gets one now, from the ids its
   * workflow holds. A set that differs from those ids stops the step loudly: it never happens unless
   * something else decided for the batch.
   */
  async function batchItems(ref: ShardBatchRef): Promise<SettlementQueueDoc[]> {
    const cached = items.get(ref.batchId);
    if (cached && sameIds(cached, ref.paymentIds)) return cached;
    const set = (await findBatchSet(c, ref.batchId)) ?? (await decideBatchSet(c, ref.batchId, ref.shard, await legacyEntries(ref)));
    if (!sameIds(set.entries, ref.paymentIds)) {
      deps.metrics?.batchSetMismatches.inc({ shard: String(ref.shard) });
      throw new Error(`batch ${ref.batchId}: its decided set (${set.entries.length} payments) differs from the ${ref.paymentIds.length} its workflow holds; nothing is sent or recorded for it`);
    }
    remember(ref.batchId, set.entries);
    return set.entries;
  }

  /** A batch's entries as found before sets existed: its queues, or the payments once the entries left them. */
  async function legacyEntries(ref: ShardBatchRef): Promise<SettlementQueueDoc[]> {
    const wanted = new Set(ref.paymentIds);
    const found = new Map((await readQueues(c, ref.queues)).filter((e) => wanted.has(e._id)).map((e) => [e._id, e]));
    const missing = ref.paymentIds.filter((id) => !found.has(id));
    for (const d of await findByIds(c.payments, missing)) found.set(d._id, queueEntryOf(d));
    if (found.size !== ref.paymentIds.length) throw new Error(`batch ${ref.batchId}: ${ref.paymentIds.length - found.size} of its payments are neither queued nor stored`);
    return ref.paymentIds.map((id) => found.get(id)!);
  }

  /**
   * Adopts the batch's decided set, deciding it with `claimed` when no attempt has: the claims this
   * attempt holds that the set does not list are released at once (a stale attempt's), so their
   * payments go in the next batch.
   */
  async function adoptSet(input: { shard: number; batchId: string }, claimed: readonly SettlementQueueDoc[], step: StepContext): Promise<SettlementQueueDoc[]> {
    const set = await decideBatchSet(c, input.batchId, input.shard, claimed);
    const listed = new Set(batchSetIds(set));
    const extra = claimed.filter((e) => !listed.has(e._id)).map((e) => e._id);
    if (extra.length > 0) {
      await releaseClaims(c, input.batchId, extra);
      step.log('gather attempt adopted the batch\'s decided set', { batchId: input.batchId, shard: input.shard, payments: set.entries.length, released: extra });
    }
    remember(input.batchId, set.entries);
    return set.entries;
  }

  const emitDeps = { c, temporal: deps.temporal, taskQueue: deps.taskQueue, retry: deps.webhooks?.retry ?? DEFAULT_WEBHOOK_RETRY };

  /** Runs one step of a batch's end, timed in x402_batch_end_step_seconds. */
  async function timed<T>(step: string, run: () => Promise<T>): Promise<T> {
    const done = deps.metrics?.batchEndSteps.startTimer({ step });
    try {
      return await run();
    } finally {
      done?.();
    }
  }

  async function finishVoidsAmong(entries: readonly SettlementQueueDoc[]): Promise<void> {
    for (const e of entries) {
      const claim = await findClaim(c, e._id);
      if (claim && isVoidClaim(claim.batchId)) {
        await finishVoid({ ...emitDeps, db: deps.store.db }, e, claim.at.toISOString());
      }
    }
  }

  async function gather(input: { shard: number; shards: number; batchId: string }, step: StepContext, attempt: number): Promise<{ paymentIds: string[]; queues: number[] }> {
    const s = deps.settings;
    const queues = await queuesServedBy(deps.store.db, input.shard, input.shards);
    // A retry after an attempt decided the set (and died before returning) returns that set.
    const decided = await findBatchSet(c, input.batchId);
    if (decided) {
      remember(input.batchId, decided.entries);
      return { paymentIds: batchSetIds(decided), queues };
    }
    const started = Date.now();
    for (;;) {
      const entries = await readQueues(c, queues);
      const now = Date.now();
      await reportBacklog(input.shard, queues, entries.length);
      const ready = await deps.accepted.filter(c, entries);
      const oldest = ready[0];
      const size = batchClaimSize(ready.length, oldest && now - oldest.at.getTime(), s);
      if (size > 0) {
        const chosen = ready.slice(0, size);
        const held = await claimForBatch(c, input.batchId, chosen.map((e) => e._id));
        const taken = chosen.filter((e) => held.has(e._id));
        // Claimed by another batch (which settles them), by a void (finished here if its request
        // died half-way), or orphaned by a batch that ended without them (released for the next).
        const foreign = await sortForeignClaims(c, chosen.filter((e) => !held.has(e._id)).map((e) => e._id));
        const voided = new Set(foreign.voided);
        await finishVoidsAmong(chosen.filter((e) => voided.has(e._id)));
        await removeFromQueues(c, queues, [...foreign.voided, ...foreign.elsewhere]);
        if (foreign.released.length > 0) step.log('orphaned claims released', { batchId: input.batchId, shard: input.shard, paymentIds: foreign.released });
        if (taken.length > 0) {
          const set = await adoptSet(input, taken, step);
          step.log('batch claimed', { batchId: input.batchId, shard: input.shard, payments: set.length, claimedElsewhere: foreign.elsewhere.length, attempt });
          return { paymentIds: set.map((e) => e._id), queues };
        }
      }
      if (now - started >= IDLE_RETURN_MS && ready.length === 0) {
        // Decided empty, so a stale attempt of this batch id can claim nothing for good.
        const set = await adoptSet(input, [], step);
        return { paymentIds: set.map((e) => e._id), queues };
      }
      step.heartbeat();
      await step.sleep(gatherWaitMs({ nowMs: now, ready: ready.length, oldestAtMs: oldest?.at.getTime(), watchingSinceMs: started }, { maxPayments: s.maxPayments, ...(s.minPayments === undefined ? {} : { minPayments: s.minPayments }), maxWaitMs: s.maxWaitMs, pollMs: s.shardPollMs }));
    }
  }

  async function submit(ref: ShardBatchRef, step: Pick<StepContext, 'log'> | undefined, onEntries?: (entries: SettlementQueueDoc[]) => void): Promise<{ transaction?: string }> {
    deps.metrics?.settlement.batchRetrying.touch(String(ref.shard));
    await reportBacklog(ref.shard, ref.queues);
    const entries = await batchItems(ref);
    onEntries?.(entries);
    const settlementItems = entries.map(settlementItemOf);
    const sent = await submitSettleBatch(deps.chain, ref.batchId, settlementItems);
    if (sent.kind !== 'sent') {
      await announceBatch(c, ref.shard, ref.batchId, boards); // sent by an earlier attempt: polls learn of it from the confirmation's record
      return {};
    }
    deps.metrics?.batchSize.observe(settlementItems.length);
    const recorded = await recordBatch(c, { _id: ref.batchId, shard: ref.shard, status: 'SUBMITTED', payments: entries.length, paymentIds: ref.paymentIds, transaction: sent.txHash });
    if (!recorded) step?.log('stale step left the ended batch record alone', { batchId: ref.batchId, step: 'submit' });
    await announceBatch(c, ref.shard, ref.batchId, boards);
    return { transaction: sent.txHash };
  }

  async function confirm(ref: ShardBatchRef & { transaction: string | null }, step: Pick<StepContext, 'heartbeat' | 'log'>): Promise<ConfirmationResult> {
    const sent = { sentAt: Date.now(), payments: ref.paymentIds.length };
    const shardLabel = String(ref.shard);
    deps.metrics?.settlement.batchRetrying.touch(shardLabel);
    await reportBacklog(ref.shard, ref.queues);
    const onProgress = (p: ConfirmationProgress) => {
      step.heartbeat(p);
      deps.metrics?.chain.confirmationDepth.set({ shard: shardLabel }, p.confirmations);
      deps.metrics?.settlement.batchRetrying.touch(shardLabel);
      reportBacklog(ref.shard, ref.queues).catch(() => undefined); // best effort while waiting on the chain
    };
    const r = await confirmOnChain(deps, ref.batchId, ref.transaction, { sent, pollMs: 250, onProgress }).finally(() => deps.metrics?.chain.confirmationDepth.set({ shard: shardLabel }, 0));
    if (r.status === 'confirmed') deps.metrics?.settlement.batchRetrying.clear(shardLabel);
    else deps.metrics?.settlement.batchRetrying.begin(shardLabel);
    const base = { _id: ref.batchId, shard: ref.shard, payments: ref.paymentIds.length, paymentIds: ref.paymentIds };
    if (r.status === 'confirmed') {
      const content = await settledContentOf(deps.chain, ref.batchId, (await batchItems(ref)).map(settlementItemOf));
      if (!content.matches) {
        const reason = `batch ${ref.batchId} settled on chain (tx ${r.transaction}) with entries root ${content.onChain}, but its set of ${ref.paymentIds.length} payments has root ${content.expected}`;
        deps.metrics?.settlementHalts.inc({ shard: String(ref.shard) });
        step.log('SHARD HALTED: a batch settled on chain with content other than its set', { batchId: ref.batchId, shard: ref.shard, transaction: r.transaction, onChainRoot: content.onChain, setRoot: content.expected });
        await recordBatch(c, { ...base, status: 'HALTED', transaction: r.transaction, haltReason: reason });
        await announceBatch(c, ref.shard, ref.batchId, boards);
        return { status: 'mismatch', transaction: r.transaction, reason };
      }
      await recordBatch(c, { ...base, status: 'CONFIRMED', transaction: r.transaction, blockNumber: r.blockNumber, confirmedAt: new Date(r.confirmedAt) });
      observeCaptureToConfirmed(deps.metrics, shardLabel, await batchItems(ref));
    } else if (!(await recordBatch(c, { ...base, status: 'RETRYING' }))) {
      step.log('stale step left the ended batch record alone', { batchId: ref.batchId, step: 'confirm', result: r.status });
    }
    await announceBatch(c, ref.shard, ref.batchId, boards); // the record's new version, for polls
    return r;
  }

  return {
    /** Puts a payment started without its queue entry (by an API older than shards) in its queue. */
    async enqueuePayment(input: PaymentWorkflowInput): Promise<void> {
      const { paymentId, asset, network, orderRef, capturedAt, spendIntentId, borrowerId, merchantId, payTo, amount } = input;
      const entry: SettlementQueueDoc = {
        _id: paymentId,
        spendIntentId,
        borrowerId,
        merchantId,
        payTo,
        amount,
        workflow: { asset, network, orderRef, capturedAt },
        at: new Date(capturedAt),
      };
      await enqueueEntryOnce(c, deps.shards ?? 1, entry);
    },

    /**
     * Waits until the shard's accepted payments fill a batch or the oldest has waited the batch
     * window, then claims every ready one for batchId, up to maxPaymentsUnderBacklog (batchClaimSize).
     * Returns no payments after a minute without any.
     */
    gatherBatch(input: { shard: number; shards: number; batchId: string }, step: StepContext, attempt = 1): Promise<{ paymentIds: string[]; queues: number[] }> {
      return whenTraced('settlement.batch.gather', { attributes: { 'x402.shard': input.shard, 'x402.batch.id': input.batchId } }, async (span) => {
        const gathered = await gather(input, step, attempt);
        span?.setAttribute('x402.batch.payments', gathered.paymentIds.length);
        span?.addLinks(linksTo((items.get(input.batchId) ?? []).map((e) => e.traceparent)));
        return gathered;
      });
    },

    /** Broadcasts the batch's settleBatch (a batch already settled on chain is not sent again). */
    submitBatch(ref: ShardBatchRef, step?: Pick<StepContext, 'log'>): Promise<{ transaction?: string }> {
      return whenTraced('settlement.batch.submit', { attributes: batchAttributes(ref) }, async (span) => {
        const sent = await submit(ref, step, (entries) => span?.addLinks(linksTo(entries.map((e) => e.traceparent))));
        if (sent.transaction) span?.setAttribute('chain.tx.hash', sent.transaction);
        return sent;
      });
    },

    /**
     * Waits for the batch on chain and records what polls should say about it right away. A batch
     * is CONFIRMED only when what settled on chain under its id is exactly its set (the contract's
     * stored root of its entries): anything else halts the shard at it, recorded HALTED.
     */
    confirmBatch(ref: ShardBatchRef & { transaction: string | null }, step: Pick<StepContext, 'heartbeat' | 'log'>): Promise<ConfirmationResult> {
      return whenTraced('settlement.batch.confirm', { attributes: batchAttributes(ref) }, async (span) => {
        // The set as cached or stored, never batchItems: tracing must not add its checks' failures to a step.
        if (span) span.addLinks(linksTo((items.get(ref.batchId) ?? (await findBatchSet(c, ref.batchId))?.entries ?? []).map((e) => e.traceparent)));
        const r = await confirm(ref, step);
        span?.setAttribute('x402.batch.result', r.status);
        if ('transaction' in r && r.transaction) span?.setAttribute('chain.tx.hash', r.transaction);
        return r;
      });
    },

    /**
     * Ends the batch for all its payments at once: the batch record (which keeps every payment's
     * outcome: the payments' own documents are not written, store/payment-outcomes.ts), its
     * borrowers' credit (one read and one write for all), the ledger, webhook events, one
     * signal per payment workflow (started if its start was lost) unless `notify` is 'separately'
     * (notifyBatch then sends them), and last the queue entries. Every step is idempotent, so a
     * retry after a crash anywhere repeats nothing twice.
     */
    async endBatch(ref: ShardBatchRef & { outcome: BatchOutcome; notify?: 'separately' }): Promise<void> {
      await reportBacklog(ref.shard, ref.queues);
      const entries = await batchItems(ref);
      const o = ref.outcome;
      await timed('record', async () => {
        await recordBatch(c, {
          _id: ref.batchId,
          shard: ref.shard,
          payments: entries.length,
          paymentIds: ref.paymentIds,
          status: o.status,
          ...(o.transaction ? { transaction: o.transaction } : {}),
          ...(o.status === 'CONFIRMED' ? { blockNumber: o.blockNumber, confirmedAt: new Date(o.confirmedAt) } : { failureReason: o.failureReason }),
        });
        // Kept for a CONFIRMED batch too: a stale confirmation attempt may have written RETRYING after the CONFIRMED record.
        await announceBatch(c, ref.shard, ref.batchId, boards);
      });
      await timed('holds', () => closeHoldsOfBorrowers(c, holdsByBorrower(entries), o.status === 'CONFIRMED' ? 'debt' : 'available'));
      const receipts = entries.map((e) => finalReceipt(e, o));
      await timed('ledger', () => recordLedgerLines(c, ref.batchId, receipts.map(ledgerLineOf)));
      await timed('webhooks', () => emitWebhookEvents(emitDeps, ref.batchId, outcomeEvents(entries, receipts, o)));
      if (ref.notify !== 'separately') await timed('notify', () => notifyPayments(deps.temporal, deps.taskQueue, entries, o, { spreadMs: deps.settings.notifySpreadMs ?? 0 }));
      await timed('dequeue', () => removeFromQueues(c, ref.queues, ref.paymentIds));
      deps.accepted.forget(ref.paymentIds);
      if (ref.notify !== 'separately') items.delete(ref.batchId);
      if (o.status === 'FAILED') deps.metrics?.workflowFailures.inc({ kind: 'payment' }, entries.length);
    },

    /**
     * Tells each payment workflow of an ended batch its outcome (see notifyPayments), spread over
     * SETTLEMENT_NOTIFY_SPREAD_MS. The shard runs it beside its next batch, so the spread smooths the
     * workflow tasks without lengthening the shard's round. After a worker restart the entries,
     * already out of the queues, are read from the payments.
     */
    async notifyBatch(ref: ShardBatchRef & { outcome: BatchOutcome }): Promise<void> {
      const entries = await batchItems(ref);
      await notifyPayments(deps.temporal, deps.taskQueue, entries, ref.outcome, { spreadMs: deps.settings.notifySpreadMs ?? 0 });
      items.delete(ref.batchId);
    },
  };
}


function batchAttributes(ref: ShardBatchRef): Record<string, string | number> {
  return { 'x402.shard': ref.shard, 'x402.batch.id': ref.batchId, 'x402.batch.payments': ref.paymentIds.length };
}

/** Each payment's wait from capture to the CONFIRMED record polls now read. */
function observeCaptureToConfirmed(metrics: WorkerMetrics | undefined, shard: string, entries: readonly SettlementQueueDoc[]): void {
  if (!metrics) return;
  const now = Date.now();
  for (const e of entries) metrics.settlement.captureToConfirmed.observe({ shard }, Math.max(0, now - new Date(e.at).getTime()) / 1000);
}

function settlementItemOf(e: SettlementQueueDoc): SettlementItem {
  return { paymentId: e._id, borrowerId: e.borrowerId, merchantId: e.merchantId, payTo: e.payTo as `0x${string}`, amount: BigInt(e.amount) };
}

function sameIds(entries: readonly Pick<SettlementQueueDoc, '_id'>[], paymentIds: readonly string[]): boolean {
  return entries.length === paymentIds.length && entries.every((e, i) => e._id === paymentIds[i]);
}

/** The holds (spend intent ids) each borrower of these entries closes. */
export function holdsByBorrower(entries: readonly Pick<SettlementQueueDoc, 'borrowerId' | 'spendIntentId'>[]): Map<string, string[]> {
  const byBorrower = new Map<string, string[]>();
  for (const e of entries) {
    const holds = byBorrower.get(e.borrowerId);
    if (holds) holds.push(e.spendIntentId);
    else byBorrower.set(e.borrowerId, [e.spendIntentId]);
  }
  return byBorrower;
}

export type ShardSettlement = ReturnType<typeof createShardSettlement>;
