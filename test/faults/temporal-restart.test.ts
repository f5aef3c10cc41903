import assert from 'node:assert/strict';
import { parseHostPort } from '../../src/stack/args.js';
import { portOpen } from '../../src/stack/processes.js';
import { capture } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { assertLedgerAgrees, type CapturedPayment } from '../helpers/ledger.js';
import { capturePayments, newParties, prepareVouchers, waitForPayments, type Parties, type PreparedVoucher } from '../helpers/captures.js';

// The Temporal client retries an unreachable server for about 20 s: 25 s down outlasts that, so the capture meanwhile must fail.
const CASES = [
  { how: 'stopped gracefully', kill: false, downMs: 25_000, captureWhileDown: true },
  { how: 'SIGKILLed', kill: true, downMs: 5_000, captureWhileDown: false },
] as const;

describe('fault: the Temporal server restarted on its own database with payments queued and in flight', function () {
  this.timeout(300_000);
  const env = useIsolatedStack({ env: { CONFIRMATIONS: '2', BATCH_MAX_WAIT_MS: '200' } });

  before(async function () {
    await env().chain.intervalMining(1);
  });

  /** A capture while Temporal is down answers 503 UNAVAILABLE (never 500); its retry with the same key after the restart settles it. */
  async function captureDuringOutage(parties: Parties, v: PreparedVoucher) {
    const { world: w } = env();
    const res = await capture(w, parties.merchant, v.voucher.captureBody, v.voucher.idempotencyKey);
    assert.equal(res.status, 503, JSON.stringify(res.json));
    assert.equal(res.json.error.code, 'UNAVAILABLE');
    assert.ok(res.json.error.requestId && res.headers.get('retry-after'), 'a request id and Retry-After');
    return async (): Promise<CapturedPayment> => {
      const retried = await capture(w, parties.merchant, v.voucher.captureBody, v.voucher.idempotencyKey);
      assert.equal(retried.status, 200, JSON.stringify(retried.json));
      return { paymentId: retried.json.receipt.paymentId, amount: v.amount, merchant: parties.merchant, borrowerId: parties.borrower.borrowerId };
    };
  }

  for (const c of CASES) {
    it(`${c.how}, down ${c.downMs / 1000} s: the worker and the API reconnect by themselves and every payment settles once`, async function () {
      const { stack, world: w } = env();
      const workerPid = stack.worker.pid;
      const apiPid = stack.api.pid;
      const parties = await newParties(w, `Temporal ${c.how} merchant`);
      const [late] = await prepareVouchers(w, parties, [3009n]);

      const inFlight = await capturePayments(w, parties, [3001n, 3002n, 3003n]);
      await waitForPayments(w, inFlight, 'SUBMITTED', (d) => d.status === 'SUBMITTED');
      const queued = await capturePayments(w, parties, [3004n, 3005n]);

      const restarted = stack.restartTemporal({ kill: c.kill, downMs: c.downMs });
      const { host, port } = parseHostPort(stack.urls.temporalAddress);
      while (await portOpen(host, port)) await new Promise((r) => setTimeout(r, 100));
      const retryLate = c.captureWhileDown ? await captureDuringOutage(parties, late!) : undefined;
      await restarted;

      assert.ok(stack.worker.running && stack.worker.pid === workerPid, 'the worker outlived the Temporal restart');
      assert.ok(stack.api.running && stack.api.pid === apiPid, 'the API outlived the Temporal restart');
      const after = await capturePayments(w, parties, [3006n]);
      const retried = retryLate ? [await retryLate()] : [];
      await assertLedgerAgrees(w, [...inFlight, ...queued, ...after, ...retried], { timeoutMs: 120_000 });
    });
  }
});
