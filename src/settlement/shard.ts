import type { Client } from '@temporalio/client';
import { submitSettleBatch, type SettlementItem } from '../chain/settlement.js';
import type { BatchOutcome } from '../domain/payment.js';
import { batchClaimSize, gatherWaitMs } from '../domain/gather-wait.js';
import { ledgerLineOf } from '../domain/payment-ledger.js';
import { closeHoldsOfBorrowers } from '../store/borrowers.js';
import type { SettlementQueueDoc } from '../store/documents.js';
import { recordLedgerLines } from '../store/payment-ledger.js';
import { findByIds } from '../store/find-by-ids.js';
import { announceBatch, type AnnouncedBoards, claimForBatch, enqueueEntryOnce, findClaim, isVoidClaim, queueEntryOf, queuesServedBy, readQueues, recordBatch, recordShardBacklog, removeFromQueues, sortForeignClaims } from '../store/settlement-queue.js';
import type { PaymentWorkflowInput } from '../temporal/definitions.js';
import { DEFAULT_WEBHOOK_RETRY, emitWebhookEvents } from '../webhooks/emit.js';
import type { AcceptedCaptures } from './accepted-captures.js';
import { confirmOnChain } from './confirm-batch.js';
import { finishVoid } from './finish-void.js';
import { notifyPayments } from './notify-payments.js';
import { outcomeEvents } from './outcome-events.js';
import { finalReceipt } from './receipt.js';
import type { ConfirmationResult, SettlementDeps } from './settings.js';

export interface ShardDeps extends SettlementDeps {
  temporal: Client;
  taskQueue: string;
  /** Retry policy of the webhook deliveries a batch end starts. */
  webhooks?: { retry: { initialMs: number; maxMs: number } };
  /** Which queue entries are accepted captures (their spend intent consumed by them); shared with the sweeper. */
  accepted: AcceptedCaptures;
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

  async function batchItems(ref: ShardBatchRef): Promise<SettlementQueueDoc[]> {
    const cached = items.get(ref.batchId);
    if (cached) return cached;
    const wanted = new Set(ref.paymentIds);
    const found = (await readQueues(c, ref.queues)).filter((e) => wanted.has(e._id));
    const have = new Set(found.map((e) => e._id));
    const missing = ref.paymentIds.filter((id) => !have.has(id));
    // Entries leave the queue only when their batch ended: a retried end finds the payments instead.
    for (const d of await findByIds(c.payments, missing)) found.push(queueEntryOf(d));
    remember(ref.batchId, found);
    return found;
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
    async gatherBatch(input: { shard: number; shards: number; batchId: string }, step: StepContext, attempt = 1): Promise<{ paymentIds: string[]; queues: number[] }> {
      const s = deps.settings;
      const queues = await queuesServedBy(deps.store.db, input.shard, input.shards);
      const started = Date.now();
      let reportedAt = 0;
      for (;;) {
        const entries = await readQueues(c, queues);
        const now = Date.now();
        if (now - reportedAt >= BACKLOG_REPORT_MS) {
          reportedAt = now;
          deps.metrics?.settlementBacklog.set({ shard: String(input.shard) }, entries.length);
          await recordShardBacklog(c, input.shard, entries.length);
        }
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
            step.log('batch claimed', { batchId: input.batchId, shard: input.shard, payments: taken.length, claimedElsewhere: foreign.elsewhere.length, attempt });
            remember(input.batchId, taken);
            return { paymentIds: taken.map((e) => e._id), queues };
          }
        }
        if (now - started >= IDLE_RETURN_MS && ready.length === 0) return { paymentIds: [], queues };
        step.heartbeat();
        await step.sleep(gatherWaitMs({ nowMs: now, ready: ready.length, oldestAtMs: oldest?.at.getTime(), watchingSinceMs: started }, { maxPayments: s.maxPayments, maxWaitMs: s.maxWaitMs, pollMs: s.shardPollMs }));
      }
    },

    /** Broadcasts the batch's settleBatch (a batch already settled on chain is not sent again). */
    async submitBatch(ref: ShardBatchRef, step?: Pick<StepContext, 'log'>): Promise<{ transaction?: string }> {
      const entries = await batchItems(ref);
      const settlementItems: SettlementItem[] = entries.map((e) => ({
        paymentId: e._id,
        borrowerId: e.borrowerId,
        merchantId: e.merchantId,
        payTo: e.payTo as `0x${string}`,
        amount: BigInt(e.amount),
      }));
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
    },

    /** Waits for the batch on chain and records what polls should say about it right away. */
    async confirmBatch(ref: ShardBatchRef & { transaction: string | null }, step: Pick<StepContext, 'heartbeat' | 'log'>): Promise<ConfirmationResult> {
      const sent = { sentAt: Date.now(), payments: ref.paymentIds.length };
      const r = await confirmOnChain(deps, ref.batchId, ref.transaction, { sent, pollMs: 250, onProgress: (p) => step.heartbeat(p) });
      const base = { _id: ref.batchId, shard: ref.shard, payments: ref.paymentIds.length, paymentIds: ref.paymentIds };
      if (r.status === 'confirmed') {
        await recordBatch(c, { ...base, status: 'CONFIRMED', transaction: r.transaction, blockNumber: r.blockNumber, confirmedAt: new Date(r.confirmedAt) });
      } else if (!(await recordBatch(c, { ...base, status: 'RETRYING' }))) {
        step.log('stale step left the ended batch record alone', { batchId: ref.batchId, step: 'confirm', result: r.status });
      }
      await announceBatch(c, ref.shard, ref.batchId, boards); // the record's new version, for polls
      return r;
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
