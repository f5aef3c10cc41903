import type { Client } from '@temporalio/client';
import { finishCapture } from '../src/payments/finish-capture.js';
import { consumeSpendIntent } from '../src/store/spend-intents.js';
import { deleteUnacceptedPayment, findPayment, paymentsCapturingSince } from '../src/store/payments.js';
import { allQueues, dequeueRefused, enqueueForSettlement, findQueueEntry, queueEntriesBefore, removeQueueEntry } from '../src/store/settlement/queue.js';
import { findClaims } from '../src/store/settlement/claims.js';
import type { PaymentDoc } from '../src/store/documents.js';
import type { Store } from '../src/store/mongo.js';
import type { AcceptedCaptures } from '../src/settlement/accepted-captures.js';

export interface CaptureActivityDeps {
  store: Store;
  temporal: Client;
  taskQueue: string;
  shards: number;
  accepted: AcceptedCaptures;
}

export interface SweepResult {
  resumed: number;
  abandoned: number;
}

export function createCaptureActivities(deps: CaptureActivityDeps) {
  const c = deps.store.c;
  let legacySwept = false;

  /** Decides a capture that stopped half-way: its intent consumed for it (now or earlier) resumes it, else it was never accepted. */
  async function decide(doc: PaymentDoc, result: SweepResult): Promise<void> {
    const consumed = await consumeSpendIntent(c, doc.spendIntentId, doc.voucherId, doc._id);
    if (consumed === 'not_available') {
      await deleteUnacceptedPayment(c, doc._id);
      await dequeueRefused(c, deps.shards, doc._id);
      result.abandoned++;
      return;
    }
    await enqueueForSettlement(c, deps.shards, doc);
    await finishCapture(deps, doc);
    result.resumed++;
  }

  return {
    /**
     * Finishes captures that stopped half-way (the API crashed or could not reach the store after
     * enqueuing): a queue entry older than olderThanSeconds whose spend intent this payment did not
     * consume is decided now. It reads only the settlement queues, which hold pending payments, so
     * its cost follows the backlog, not the table. Once per worker process it also picks up
     * captures left CAPTURING by the code before settlement queues (one scan of payments).
     */
    async resumeStalledCaptures(input: { olderThanSeconds: number; limit: number }): Promise<SweepResult> {
      const cutoff = Date.now() - input.olderThanSeconds * 1000;
      const result: SweepResult = { resumed: 0, abandoned: 0 };
      for (const q of await allQueues(deps.store.db)) {
        const stale = await queueEntriesBefore(c, q, new Date(cutoff));
        const accepted = new Set((await deps.accepted.filter(c, stale)).map((e) => e._id));
        for (const e of stale.filter((x) => !accepted.has(x._id)).slice(0, input.limit)) {
          const doc = await findPayment(c, e._id);
          if (doc) await decide(doc, result);
          else {
            await removeQueueEntry(c, q, e._id);
            result.abandoned++;
          }
        }
      }
      if (!legacySwept) {
        // A claimed payment is its batch's (or its void's) to finish, whatever its document says.
        const stalled = await paymentsCapturingSince(c, new Date(cutoff));
        const claimed = new Set((await findClaims(c, stalled.map((d) => d._id))).map((cl) => cl._id));
        for (const doc of stalled.filter((d) => !claimed.has(d._id))) {
          const queued = await findQueueEntry(c, deps.shards, doc._id);
          if (!queued) await decide(doc, result);
        }
        legacySwept = true;
      }
      return result;
    },
  };
}

export type CaptureActivities = ReturnType<typeof createCaptureActivities>;
