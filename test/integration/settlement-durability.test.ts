import { getStack } from '../support/stack.js';
import { capturePayments, newParties, waitForAny } from '../helpers/captures.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { world, type World } from '../helpers/world.js';

/** A quick pass on the shared stack; test/faults (npm run test:faults) goes much further. */
describe('settlement: crashes lose and duplicate nothing', function () {
  this.timeout(240_000);
  let w: World;
  before(async function () {
    w = await world();
  });

  for (const moment of ['right after capture', 'while the batch is in flight'] as const) {
    it(`a worker killed with SIGKILL ${moment} settles every payment exactly once`, async function () {
      const stack = await getStack();
      const parties = await newParties(w, `Durability ${moment}`);
      const payments = await capturePayments(w, parties, [101n, 202n, 303n, 404n, 505n, 606n]);
      if (moment === 'while the batch is in flight') {
        // Sent, not merely claimed: a kill inside submitBatch costs its start-to-close (test:faults covers it).
        // anvil mines at once, so SUBMITTED can last less than one poll; CONFIRMED by the batch record
        // means the batch end (credit, ledger, signals) is still running or about to.
        await waitForAny(w, payments, 'sent', (d) => d.status === 'SUBMITTED' || d.status === 'CONFIRMED', 30_000);
      }
      await stack.killWorker('SIGKILL');
      await new Promise((r) => setTimeout(r, 1500));
      await stack.restartWorker();

      await assertLedgerAgrees(w, payments, { timeoutMs: 120_000 });
    });
  }
});
