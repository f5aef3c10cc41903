import type { Client } from '@temporalio/client';
import { finishCapture } from '../src/payments/finish-capture.js';
import { consumeSpendIntent } from '../src/store/spend-intents.js';
import { deleteUnacceptedPayment } from '../src/store/payments.js';
import type { Store } from '../src/store/mongo.js';

export interface CaptureActivityDeps {
  store: Store;
  temporal: Client;
  taskQueue: string;
}

export interface SweepResult {
  resumed: number;
  abandoned: number;
}

export function createCaptureActivities(deps: CaptureActivityDeps) {
  return {
    /**
     * Finishes captures that stopped half-way (the API crashed or could not reach Temporal after
     * claiming the voucher): a payment whose spend intent this voucher consumed, or can still
     * consume, gets its workflow; one whose intent is gone was never accepted and is removed.
     */
    async resumeStalledCaptures(input: { olderThanSeconds: number; limit: number }): Promise<SweepResult> {
      const c = deps.store.c;
      const cutoff = new Date(Date.now() - input.olderThanSeconds * 1000);
      const stalled = await c.payments.find({ status: 'CAPTURING', updatedAt: { $lt: cutoff } }).limit(input.limit).toArray();
      const result: SweepResult = { resumed: 0, abandoned: 0 };
      for (const doc of stalled) {
        const consumed = await consumeSpendIntent(c, doc.spendIntentId, doc.voucherId, doc._id);
        if (consumed === 'not_available') {
          await deleteUnacceptedPayment(c, doc._id);
          result.abandoned++;
          continue;
        }
        await finishCapture(deps, doc);
        result.resumed++;
      }
      return result;
    },
  };
}

export type CaptureActivities = ReturnType<typeof createCaptureActivities>;
