import type { Client } from '@temporalio/client';
import type { Logger } from '../observability/logger.js';
import type { PaymentDoc } from '../store/documents.js';
import { startPaymentWorkflow } from '../temporal/start-payment.js';

export interface FinishCaptureDeps {
  temporal: Client;
  taskQueue: string;
}

/**
 * The second half of an accepted capture: start the payment workflow keyed by paymentId (the
 * payment is already in its settlement queue). Idempotent, so the API's background start, a
 * replayed request and the worker's sweeper may all run it for one payment.
 */
export async function finishCapture(deps: FinishCaptureDeps, doc: PaymentDoc): Promise<void> {
  await startPaymentWorkflow(deps.temporal, deps.taskQueue, {
    paymentId: doc._id,
    merchantId: doc.merchantId,
    borrowerId: doc.borrowerId,
    spendIntentId: doc.spendIntentId,
    payTo: doc.payTo,
    amount: doc.amount,
    asset: doc.asset,
    network: doc.network,
    orderRef: doc.orderRef,
    capturedAt: doc.capturedAt.toISOString(),
    queued: true,
  });
}

export interface CaptureFinisher {
  /** Has the payment's workflow started soon; never throws, never waits. */
  submit(doc: PaymentDoc): void;
}

/**
 * Runs finishCapture after the capture has answered, at most `limit` at a time. The answer only
 * waits for the durable writes (voucher claimed, payment queued, spend intent consumed); a start
 * that fails, or one beyond the limit, is left to the payment's settlement shard, which starts the
 * workflow with its outcome signal when the batch ends.
 */
export class BackgroundCaptureFinisher implements CaptureFinisher {
  private running = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly deps: FinishCaptureDeps,
    private readonly logger: Logger,
    private readonly limit = 256,
  ) {}

  submit(doc: PaymentDoc): void {
    if (this.running >= this.limit) {
      this.logger.warn('capture finishing saturated; the settlement shard will start the workflow', { paymentId: doc._id });
      return;
    }
    this.running++;
    const p = finishCapture(this.deps, doc)
      .catch((err: unknown) => this.logger.warn('payment workflow start deferred to the settlement shard', { paymentId: doc._id, error: err }))
      .finally(() => {
        this.running--;
        this.inFlight.delete(p);
      });
    this.inFlight.add(p);
  }

  /** Waits for the starts in flight, e.g. before a graceful shutdown. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}
