import type { Context } from 'koa';
import { isTerminal, type Receipt } from '../../domain/payment.js';
import { preferredWaitSeconds } from '../../http/prefer-wait.js';
import { retryAfterSeconds } from '../../payments/poll-advice.js';
import { paymentStatus } from '../../payments/status.js';
import type { PaymentStatusWaiters } from '../../payments/status-waiters.js';
import { withRefunds } from '../../payments/refund-status.js';
import type { ApiDeps } from '../deps.js';
import { merchantOf } from '../merchant-auth.js';

/** Aborts when the client goes away before its answer is written. */
function abortOnClose(ctx: Context): AbortSignal {
  const ctl = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) ctl.abort();
  });
  return ctl.signal;
}

/**
 * GET /facilitator/payments/{paymentId}. With `Prefer: wait=N` (at most 30 s) the answer is held
 * until the payment is final (CONFIRMED, FAILED, VOIDED), or N seconds pass (the status then, e.g.
 * SUBMITTED), and says `Preference-Applied: wait=N`: a merchant waiting for CONFIRMED sends one
 * request, however many steps the payment takes meanwhile. A final status answers at once. Past the
 * process's waiter bound the poll is answered at once without Preference-Applied, as a plain one.
 * An answer the caller was not held for carries Retry-After while the payment still moves.
 */
export function paymentPoll(deps: ApiDeps, waiters: PaymentStatusWaiters) {
  return async (ctx: Context) => {
    const merchantId = merchantOf(ctx).merchantId;
    const requested = ctx.params.paymentId ?? '';
    ctx.state.workflowId = requested;
    let receipt: Receipt = await paymentStatus(deps, merchantId, requested);
    const waitSeconds = preferredWaitSeconds(ctx.get('prefer') || undefined);
    let held = false;
    if (waitSeconds !== undefined) {
      if (isTerminal(receipt.status) || waitSeconds === 0) held = true;
      else {
        const abort = abortOnClose(ctx);
        const current = () => paymentStatus(deps, merchantId, receipt.paymentId);
        const deadline = Date.now() + waitSeconds * 1000;
        const m = deps.metrics?.api;
        // Each step (QUEUED -> SUBMITTED -> CONFIRMED) ends one wait; the next starts from it while time is left.
        for (;;) {
          const waiting = waiters.wait({ paymentId: receipt.paymentId, from: receipt.status, waitMs: Math.max(0, deadline - Date.now()), current, abort });
          if (!waiting) {
            if (!held) m?.paymentLongPollsOverLimit.inc();
            break;
          }
          held = true;
          m?.paymentLongPolls.inc();
          const changed = await waiting.finally(() => m?.paymentLongPolls.dec());
          if (abort.aborted) {
            ctx.body = receipt; // nobody reads it: no further store read
            return;
          }
          if (!changed) {
            receipt = await current(); // the wait ended (or the process stops): the status now
            break;
          }
          receipt = changed;
          if (isTerminal(receipt.status) || Date.now() >= deadline) break;
        }
      }
    }
    if (held) ctx.set('Preference-Applied', `wait=${waitSeconds}`);
    else {
      const retryAfter = retryAfterSeconds(receipt.status, deps.env.BATCH_MAX_WAIT_MS, deps.env.BATCH_MIN_PAYMENTS);
      if (retryAfter !== undefined) ctx.set('Retry-After', String(retryAfter));
    }
    ctx.body = await withRefunds(deps, receipt);
  };
}
