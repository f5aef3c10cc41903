import assert from 'node:assert/strict';
import { parseHostPort } from '../../tools/stack/args.js';
import { portOpen } from '../../tools/stack/processes.js';
import { capture } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { capturePayments, newParties, prepareVouchers, waitForPayments, type Parties, type PreparedVoucher, type CapturedPayment } from '../helpers/captures.js';

// 25 s down outlasts the Temporal client's own retries (about 20 s): the payment workflow's start really fails.
const CASES = [
  { how: 'stopped gracefully', kill: false, downMs: 25_000, captureWhileDown: true },
  { how: 'SIGKILLed', kill: true, downMs: 5_000, captureWhileDown: false },
] as const;

describe('fault: the Temporal server restarted on its own database with payments queued and in flight', function () {
  this.timeout(300_000);
  // One settlement shard: the test holds one batch in flight and one queued across the restart.
  const env = useIsolatedStack({ env: { CONFIRMATIONS: '2', BATCH_MAX_WAIT_MS: '200', SETTLEMENT_SHARDS: '1' } });

  before(async function () {
    await env().chain.intervalMining(1);
  });

  /**
   * Capture does not wait for Temporal: while it is down a capture is still accepted (its durable
   * writes are in the store), its workflow start fails, and the capture sweeper starts it once
   * Temporal is back. A retry with the same key replays the same payment.
   */
  async function captureDuringOutage(parties: Parties, v: PreparedVoucher): Promise<CapturedPayment> {
    const { world: w } = env();
    const res = await capture(w, parties.merchant, v.voucher.captureBody, v.voucher.idempotencyKey);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.receipt.status, 'QUEUED');
    const replay = await capture(w, parties.merchant, v.voucher.captureBody, v.voucher.idempotencyKey);
    assert.equal(replay.status, 200, JSON.stringify(replay.json));
    assert.equal(replay.json.receipt.paymentId, res.json.receipt.paymentId);
    return { paymentId: res.json.receipt.paymentId, amount: v.amount, merchant: parties.merchant, borrowerId: parties.borrower.borrowerId };
  }

  for (const c of CASES) {
    it(`${c.how}, down ${c.downMs / 1000} s: the worker and the API reconnect by themselves and every payment settles once`, async function () {
      const { stack, world: w } = env();
      const workerPid = stack.worker.pid;
      const apiPid = stack.api.pid;
      const parties = await newParties(w, `Temporal ${c.how} merchant`);
      const [late] = await prepareVouchers(w, parties, [3009n]);

      const inFlight = await capturePayments(w, parties, [3001n, 3002n, 3003n]);
      // Sent: on a slow machine the three may go in two batches, the first confirmed before the second is sent.
      await waitForPayments(w, inFlight, 'sent (SUBMITTED or CONFIRMED)', (d) => d.status === 'SUBMITTED' || d.status === 'CONFIRMED');
      const queued = await capturePayments(w, parties, [3004n, 3005n]);

      const restarted = stack.restartTemporal({ kill: c.kill, downMs: c.downMs });
      const { host, port } = parseHostPort(stack.urls.temporalAddress);
      while (await portOpen(host, port)) await new Promise((r) => setTimeout(r, 100));
      const duringOutage = c.captureWhileDown ? [await captureDuringOutage(parties, late!)] : [];
      await restarted;

      assert.ok(stack.worker.running && stack.worker.pid === workerPid, 'the worker outlived the Temporal restart');
      assert.ok(stack.api.running && stack.api.pid === apiPid, 'the API outlived the Temporal restart');
      const after = await capturePayments(w, parties, [3006n]);
      await assertLedgerAgrees(w, [...inFlight, ...queued, ...after, ...duringOutage], { timeoutMs: 120_000 });
    });
  }
});
