import assert from 'node:assert/strict';
import { uuidToBytes32 } from '../../src/domain/ids.js';
import { getStack } from '../support/stack.js';
import { capture, erc20BalanceOf, newBorrower, newMerchant, newVoucher, paymentSettledEvent, pollUntil, world, type World } from '../helpers/world.js';

describe('settlement: crashes lose and duplicate nothing', function () {
  this.timeout(240_000);
  let w: World;
  before(async function () {
    w = await world();
  });

  async function settledEventsFor(paymentIds: string[]) {
    const logs = await w.publicClient.getLogs({ address: w.settlement, event: paymentSettledEvent, fromBlock: 0n, toBlock: 'latest' });
    const wanted = new Set<string>(paymentIds.map((id) => uuidToBytes32(id)));
    return logs.filter((l) => wanted.has(l.args.paymentId as string));
  }

  for (const moment of ['right after capture', 'while the batch is in flight'] as const) {
    it(`a worker killed with SIGKILL ${moment} settles every payment exactly once`, async function () {
      const stack = await getStack();
      const m = await newMerchant(w);
      const b = await newBorrower(w);
      const amounts = [101, 202, 303, 404, 505, 606].map(String);
      const vouchers = [];
      for (const a of amounts) vouchers.push(await newVoucher(w, m, b, a));
      const ids: string[] = [];
      for (const v of vouchers) {
        const res = await capture(w, m, v.captureBody);
        assert.equal(res.status, 200, JSON.stringify(res.json));
        ids.push(res.json.receipt.paymentId);
      }
      if (moment === 'while the batch is in flight') {
        const deadline = Date.now() + 30_000;
        while (Date.now() < deadline && (await w.store.c.settlementClaims.countDocuments({ _id: { $in: ids } })) === 0) {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      await stack.killWorker('SIGKILL');
      await new Promise((r) => setTimeout(r, 1500));
      await stack.restartWorker();

      for (const id of ids) await pollUntil(w, m, id, 'CONFIRMED', 120_000);
      const events = await settledEventsFor(ids);
      assert.equal(events.length, ids.length, 'one PaymentSettled per payment, no more');
      const balance = await w.publicClient.readContract({ address: w.asset, abi: [erc20BalanceOf], functionName: 'balanceOf', args: [m.payoutAddress] });
      assert.equal(balance, amounts.reduce((s, a) => s + BigInt(a), 0n));
      // The store's projection trails the workflow by one activity; it must catch up, not stay behind.
      const deadline = Date.now() + 15_000;
      let projected = 0;
      while ((projected = await w.store.c.payments.countDocuments({ _id: { $in: ids }, status: 'CONFIRMED' })) < ids.length && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(projected, ids.length);
    });
  }
});
