import { useIsolatedStack } from '../support/isolated-stack.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { captureVouchers, newParties, prepareVouchers, waitForAny, waitForPayments, type CapturedPayment } from '../helpers/captures.js';

const KILLS = 20;
const PER_ROUND = 2;

/**
 * Where each kill lands. Temporal notices a dead worker only when its activity times out (10 s
 * heartbeat while confirming, 30 s start-to-close while submitting), so most kills hit a worker
 * that is recovering an interrupted batch; every fifth waits for a fresh batch being confirmed,
 * and one kill lands right after a batch claimed its payments, around the broadcast.
 */
function momentOf(round: number): 'SUBMITTED' | 'claimed by a batch' | 'any batch in flight' {
  if (round % 5 === 0) return 'SUBMITTED';
  if (round === 7) return 'claimed by a batch';
  return 'any batch in flight';
}

describe('fault: the worker SIGKILLed mid-settlement, 20 times in a row', function () {
  this.timeout(900_000);
  // One block a second and 3 confirmations keep each batch in flight for a few seconds: the window the kills aim at.
  const env = useIsolatedStack({ env: { CONFIRMATIONS: '3', BATCH_MAX_WAIT_MS: '200' } });

  before(async function () {
    await env().chain.intervalMining(1);
  });

  it('settles every payment exactly once, and the chain, the API and the store agree', async function () {
    const { stack, world: w } = env();
    const parties = await newParties(w, 'SIGKILL merchant');
    const amounts = Array.from({ length: KILLS * PER_ROUND }, (_, i) => BigInt(1000 + i));
    const vouchers = await prepareVouchers(w, parties, amounts);
    const payments: CapturedPayment[] = [];

    for (let round = 0; round < KILLS; round++) {
      const fresh = await captureVouchers(w, parties, vouchers.slice(round * PER_ROUND, (round + 1) * PER_ROUND));
      payments.push(...fresh);
      const moment = momentOf(round);
      if (moment === 'any batch in flight') {
        // Often the batch a previous kill interrupted, still waiting for Temporal to time out its activity: a crash loop.
        await waitForAny(w, payments, moment, (d) => d.settlementBatchId !== undefined && d.status !== 'CONFIRMED');
      } else if (moment === 'SUBMITTED') {
        // The round's payments may ride in one batch per settlement shard: kill while one of them is being confirmed.
        await waitForAny(w, fresh, moment, (d) => d.status === 'SUBMITTED', 120_000);
      } else {
        await waitForPayments(w, fresh, moment, (d) => d.settlementBatchId !== undefined, 120_000);
      }
      await stack.killWorker('SIGKILL');
      await stack.restartWorker();
    }

    await assertLedgerAgrees(w, payments, { timeoutMs: 180_000 });
  });
});
