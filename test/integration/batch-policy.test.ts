import assert from 'node:assert/strict';
import { capturePayments, newParties } from '../helpers/captures.js';
import { pollUntil } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';

/**
 * Group commit (issue 45): with BATCH_MIN_PAYMENTS=1, the default, a shard sends a batch as soon as
 * it is free, and what arrives while a batch settles rides in the next one. The window is set to
 * ten minutes here, so a payment that settles at all settled without waiting for it. (How fast is
 * for the bench to say: docs/benchmarks.md.)
 */
describe('settlement: group commit sends a lone payment without waiting for the batch window', function () {
  this.timeout(300_000);
  const env = useIsolatedStack({ env: { BATCH_MIN_PAYMENTS: '1', BATCH_MAX_WAIT_MS: '600000', SETTLEMENT_SHARDS: '1' } });

  it('a lone capture is CONFIRMED long before a ten-minute window; captures sent together share batches', async function () {
    const w = env().world;
    const parties = await newParties(w, 'Group commit merchant');
    const [lone] = await capturePayments(w, parties, [1234n]);
    const confirmed = await pollUntil(w, parties.merchant, lone!.paymentId, 'CONFIRMED', 120_000);
    assert.ok(confirmed.batchId, 'settled in a batch');

    const together = await capturePayments(w, parties, Array.from({ length: 12 }, (_, i) => BigInt(2000 + i)));
    const batches = new Set<string>();
    for (const p of together) batches.add((await pollUntil(w, parties.merchant, p.paymentId, 'CONFIRMED', 120_000)).batchId as string);
    assert.ok(batches.size < together.length, `12 captures settled in fewer batches than payments (${batches.size})`);
  });
});
