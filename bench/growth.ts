/**
 * Data growth: many terminal payments written straight into the store (no API, no workflows), so a
 * level can be re-run against a store that looks like months of traffic. Documents have the
 * shapes the product writes: PaymentDoc (CONFIRMED), plus, while inserting stays fast enough, the
 * merchant's idempotency key and the settlement claim of each payment.
 */
import { randomBytes } from 'node:crypto';
import { newId } from '@credit-facilitator/wire/ids';
import type { IdempotencyDoc, PaymentDoc, SettlementClaimDoc } from '../src/store/documents.js';
import type { ProvisionedMerchant } from '../tools/harness/merchants.js';
import type { OnboardedBorrower } from '../tools/harness/onboarding.js';
import type { World } from '../tools/harness/world.js';
import { withBatchOutcomes } from '../src/store/payment-outcomes.js';
import { findPayments } from '../src/store/payments.js';
import type { PipelineQuiet } from './ceilings.js';

export interface PreloadResult {
  storedPayments: number;
  seconds: number;
  paymentsPerSecond: number;
  /** Payments that also got their idempotency key and settlement claim documents. */
  withSideDocuments: number;
  note: string;
  /** Payments still on their way when the re-run started (after a bounded wait), and the wait. */
  backlogBefore?: { left: number; waitedSeconds: number };
  /** Payment workflows still running when the re-runs started (after a bounded wait), and the wait. */
  quietBefore?: PipelineQuiet;
}

const CHUNK = 1000;
const BATCH_SIZE = 100;

interface Docs {
  payments: PaymentDoc[];
  keys: IdempotencyDoc[];
  claims: SettlementClaimDoc[];
}

function chunk(n: number, merchants: readonly ProvisionedMerchant[], borrowers: readonly OnboardedBorrower[], settlement: { network: string; asset: string }, offset: number): Docs {
  const out: Docs = { payments: [], keys: [], claims: [] };
  const base = Date.now() - 30 * 86400_000;
  let batchId = newId();
  let tx = `0x${randomBytes(32).toString('hex')}`;
  for (let k = 0; k < n; k++) {
    const i = offset + k;
    if (i % BATCH_SIZE === 0) {
      batchId = newId();
      tx = `0x${randomBytes(32).toString('hex')}`;
    }
    const m = merchants[i % merchants.length] as ProvisionedMerchant;
    const b = borrowers[(i * 7) % borrowers.length] as OnboardedBorrower;
    const capturedAt = new Date(base + i * 20);
    const confirmedAt = new Date(capturedAt.getTime() + 7000);
    const paymentId = newId();
    const idempotencyKey = newId();
    out.payments.push({
      _id: paymentId,
      voucherId: newId(),
      spendIntentId: newId(),
      merchantId: m.merchantId,
      borrowerId: b.borrowerId,
      operationalAgentId: b.operationalAgentId,
      payTo: m.payoutAddress.toLowerCase(),
      amount: '1000',
      asset: settlement.asset.toLowerCase(),
      network: settlement.network,
      orderRef: `order-${paymentId.slice(0, 8)}`,
      resource: 'http://127.0.0.1:9000/premium',
      idempotencyKey,
      status: 'CONFIRMED',
      capturedAt,
      updatedAt: confirmedAt,
      batchId,
      transaction: tx,
      blockNumber: String(1000 + Math.floor(i / BATCH_SIZE)),
      confirmedAt,
    });
    out.keys.push({
      _id: `${m.merchantId}:${idempotencyKey}`,
      merchantId: m.merchantId,
      fingerprint: randomBytes(32).toString('hex'),
      paymentId,
      createdAt: capturedAt,
      expiresAt: new Date(capturedAt.getTime() + 365 * 86400_000),
    });
    out.claims.push({ _id: paymentId, batchId, at: confirmedAt });
  }
  return out;
}

/**
 * Inserts `n` CONFIRMED payments in chunks of 1000, each with its idempotency key and settlement
 * claim: a capture inserts a key beside the stored ones, so the data growth it is measured against
 * includes them (a quick run once stored payments only after the first 1,000, to save ~15 s).
 */
export async function preloadPayments(
  w: World,
  merchants: readonly ProvisionedMerchant[],
  borrowers: readonly OnboardedBorrower[],
  settlement: { network: string; asset: string },
  n: number,
  log: (m: string) => void = () => {},
): Promise<PreloadResult> {
  const c = w.store.c;
  const t0 = performance.now();
  let done = 0;
  for (let offset = 0; offset < n; offset += CHUNK) {
    const size = Math.min(CHUNK, n - offset);
    const docs = chunk(size, merchants, borrowers, settlement, offset);
    await c.payments.insertMany(docs.payments, { ordered: false });
    await c.idempotency.insertMany(docs.keys, { ordered: false });
    await c.settlementClaims.insertMany(docs.claims, { ordered: false });
    done += size;
    if (Math.floor(done / 20_000) !== Math.floor((done - size) / 20_000)) log(`  preload: ${done} of ${n} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { storedPayments: done, seconds, paymentsPerSecond: done / seconds, withSideDocuments: done, note: 'each with its idempotency key and settlement claim' };
}

/**
 * Waits (at most `maxSeconds`) until none of the given payments (the earlier levels' accepted ones
 * the merchants did not see end) is still on its way in the store, read by _id, so a re-run does not
 * inherit the previous level's backlog; returns how many are left.
 */
export async function waitForStoreBacklog(w: World, paymentIds: readonly string[], maxSeconds: number): Promise<{ left: number; waitedSeconds: number }> {
  const t0 = performance.now();
  let pending = [...paymentIds];
  for (;;) {
    const docs = new Map((await withBatchOutcomes(w.store.c, await findPayments(w.store.c, pending))).map((d) => [d._id, d.status]));
    pending = pending.filter((id) => docs.get(id) !== 'CONFIRMED' && docs.get(id) !== 'FAILED');
    const waitedSeconds = (performance.now() - t0) / 1000;
    if (pending.length === 0 || waitedSeconds >= maxSeconds) return { left: pending.length, waitedSeconds };
    await new Promise((r) => setTimeout(r, 1000));
  }
}
