import assert from 'node:assert/strict';
import type { PreparedVoucher } from '../../bench/vouchers.js';
import type { CapturedPayment } from '../helpers/captures.js';
import type { World } from '../helpers/world.js';
import { capturedPayment } from './load-captures.js';
import type { TestMerchant } from '../helpers/world.js';

/**
 * Of the captures taken while a backup ran, the ones a stack restored from it must settle. The store
 * copy holds some of them. A capture whose spend intent the copy shows consumed was accepted, and
 * the restored stack must settle it. A capture the copy caught half-way (payment and queue entry
 * written, intent not yet consumed) is the capture sweeper's to decide: resumed and settled while its
 * intent lasts, else abandoned; it counts by how the sweeper decides, and the sweeper must decide.
 * The rest happened after the copy. `acceptedDuringBackup` bounds the answer from above.
 */
export async function capturesKeptByTheCopy(
  w: World,
  vouchers: readonly PreparedVoucher[],
  merchants: readonly TestMerchant[],
  acceptedDuringBackup: number,
  timeoutMs = 120_000,
): Promise<CapturedPayment[]> {
  const intentIds = vouchers.map((v) => v.spendIntentId);
  const copied = await w.store.c.payments.find({ spendIntentId: { $in: intentIds } }).toArray();
  const consumedFor = async () =>
    new Map((await w.store.c.spendIntentFates.find({ _id: { $in: intentIds }, fate: 'CONSUMED' }).toArray()).map((f) => [f._id, f.paymentId as string]));
  const acceptedInCopy = await consumedFor();
  const deadline = Date.now() + timeoutMs;
  let decided = acceptedInCopy;
  for (;;) {
    decided = await consumedFor();
    const remaining = await w.store.c.payments.countDocuments({ _id: { $in: copied.filter((d) => decided.get(d.spendIntentId) !== d._id).map((d) => d._id) } });
    if (remaining === 0) break;
    assert.ok(Date.now() < deadline, `the sweeper decides every capture the copy caught half-way (${remaining} undecided)`);
    await new Promise((r) => setTimeout(r, 500));
  }
  for (const [intent, paymentId] of acceptedInCopy) assert.equal(decided.get(intent), paymentId, 'an accepted capture stays accepted');
  const byIntent = new Map(vouchers.map((v) => [v.spendIntentId, v]));
  const kept = copied.filter((d) => decided.get(d.spendIntentId) === d._id).map((d) => capturedPayment(merchants, byIntent.get(d.spendIntentId)!, d._id));
  assert.ok(kept.length > 0 && kept.length <= acceptedDuringBackup, `the copy holds some of the captures taken under load (${kept.length} of ${acceptedDuringBackup})`);
  return kept;
}
