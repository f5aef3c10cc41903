import assert from 'node:assert/strict';
import { captureVouchers, prepareVouchers, type CapturedPayment, type Parties } from '../helpers/captures.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { metricSum } from '../helpers/metrics.js';
import { newBorrower, newMerchant, UNTHROTTLED, world, type World } from '../helpers/world.js';

const PAYMENTS = 20;

interface WorkerCounts {
  borrowers: number;
  fates: number;
  batches: number;
}

async function workerCounts(w: World): Promise<WorkerCounts> {
  const text = await (await fetch(`http://127.0.0.1:${w.env.WORKER_METRICS_PORT}/metrics`)).text();
  return {
    borrowers: metricSum(text, 'x402_store_commands_total', 'collection="borrowers"'),
    fates: metricSum(text, 'x402_store_commands_total', 'collection="spend_intent_fates"'),
    batches: metricSum(text, 'x402_batch_size_count'),
  };
}

/** PAYMENTS payments spread over `borrowers` borrowers of one merchant, all captured at once; what the worker's store commands were meanwhile. */
async function settleSpread(w: World, borrowers: number): Promise<WorkerCounts> {
  const merchant = await newMerchant(w, `Batch commands ${borrowers}`, { rateLimits: UNTHROTTLED });
  const parties: Parties[] = await Promise.all(Array.from({ length: borrowers }, async () => ({ merchant, borrower: await newBorrower(w) })));
  const prepared = await Promise.all(parties.map((p) => prepareVouchers(w, p, Array.from({ length: PAYMENTS / borrowers }, (_, i) => BigInt(100 + i)))));
  const before = await workerCounts(w);
  const payments: CapturedPayment[] = (await Promise.all(parties.flatMap((p, i) => (prepared[i] ?? []).map((v) => captureVouchers(w, p, [v]))))).flat();
  // Also waits for every borrower's booked debt: the batch ends' borrower writes are done.
  await assertLedgerAgrees(w, payments);
  const after = await workerCounts(w);
  return { borrowers: after.borrowers - before.borrowers, fates: after.fates - before.fates, batches: after.batches - before.batches };
}

describe('settlement: the store commands of a batch do not grow with its payments or borrowers', function () {
  this.timeout(240_000);
  let w: World;
  before(async function () {
    w = await world();
  });

  it(`${PAYMENTS} payments of 1 borrower and of 5 borrowers: one borrower read and one write per batch, fates read per gather, not per payment`, async function () {
    const one = await settleSpread(w, 1);
    const five = await settleSpread(w, 5);
    for (const [label, n] of [['1 borrower', one], ['5 borrowers', five]] as const) {
      assert.ok(n.batches >= 1, `${label}: batches counted ${JSON.stringify(n)}`);
      // A batch end reads its borrowers once and writes them in one command; a write a concurrent capture's
      // hold overtook is decided again (one more read and write). Under CI load two such retries were seen.
      assert.ok(n.borrowers <= 2 * n.batches + 4, `${label}: ${n.borrowers} borrower commands for ${n.batches} batches`);
      // One $in read per gather poll that met new entries (8 of 20 seen); one read per entry was at least PAYMENTS (27 and 36 seen).
      assert.ok(n.fates < PAYMENTS, `${label}: ${n.fates} spend intent fate reads for ${PAYMENTS} payments`);
    }
    // Per batch, 5 borrowers cost what 1 does (one read and one write per borrower made it 5 times as many).
    assert.ok(five.borrowers / five.batches <= one.borrowers / one.batches + 1, `5 borrowers: ${JSON.stringify(five)}; 1 borrower: ${JSON.stringify(one)}`);
  });
});
