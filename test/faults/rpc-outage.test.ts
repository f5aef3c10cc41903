import assert from 'node:assert/strict';
import { call, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import type { ProxyMode } from '../support/tcp-proxy.js';
import { assertLedgerAgrees, settledEventsFor } from '../helpers/ledger.js';
import { capturePayments, newParties, waitForPayments, type CapturedPayment } from '../helpers/captures.js';

// 60 s in all: first the node refuses connections (it is down), then it swallows them (packets dropped, every call hangs).
const OUTAGE: { mode: ProxyMode; ms: number }[] = [
  { mode: 'refuse', ms: 30_000 },
  { mode: 'blackhole', ms: 30_000 },
];

async function apiStatuses(w: World, payments: CapturedPayment[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of payments) {
    const res = await call(w, 'GET', `/facilitator/payments/${p.paymentId}`, { token: p.merchant.apiKey });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    out.push(res.json.status);
  }
  return out;
}

describe('fault: the RPC node unreachable from the worker and the API for 60 s', function () {
  this.timeout(300_000);
  // One settlement shard: the test follows one batch in flight and one queued through the outage. Batches
  // close when full (3 payments), so a slow machine cannot split the in-flight three over two batches.
  const env = useIsolatedStack({
    env: { CONFIRMATIONS: '2', SETTLEMENT_SHARDS: '1', BATCH_MAX_PAYMENTS: '3', BATCH_MAX_WAIT_MS: '60000' },
    rpcProxy: true,
  });

  before(async function () {
    await env().chain.intervalMining(1);
  });

  it('payments wait (captures still answer), then every one settles exactly once when the node is back', async function () {
    const { stack, world: w, rpcProxy } = env();
    const proxy = rpcProxy!;
    const parties = await newParties(w, 'RPC outage merchant');
    const inFlight = await capturePayments(w, parties, [4001n, 4002n, 4003n]);
    const [broadcast] = await waitForPayments(w, inFlight, 'SUBMITTED', (d) => d.status === 'SUBMITTED');

    let captured: CapturedPayment[] = [];
    for (const [i, phase] of OUTAGE.entries()) {
      proxy.setMode(phase.mode);
      if (i === 0) captured = await capturePayments(w, parties, [4004n, 4005n, 4006n]);
      await new Promise((r) => setTimeout(r, phase.ms));
      const statuses = await apiStatuses(w, [...inFlight, ...captured]);
      assert.deepEqual(statuses, ['SUBMITTED', 'SUBMITTED', 'SUBMITTED', 'QUEUED', 'QUEUED', 'QUEUED'], `after the ${phase.mode} phase, payments wait`);
    }
    assert.ok(stack.worker.running, 'the worker rode out the outage');
    // The chain itself went on: the in-flight batch is mined there, but nobody could see it.
    const mined = await w.publicClient.getTransactionReceipt({ hash: broadcast!.transaction as `0x${string}` });
    assert.equal(mined.status, 'success');
    assert.equal((await settledEventsFor(w, captured.map((p) => p.paymentId))).length, 0, 'nothing captured during the outage was paid yet');

    proxy.setMode('pass');
    await assertLedgerAgrees(w, [...inFlight, ...captured], { timeoutMs: 90_000 });
  });
});
