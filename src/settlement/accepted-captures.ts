import type { Collections } from '../store/collections.js';
import type { SettlementQueueDoc } from '../store/documents.js';
import { findSpendIntentFate } from '../store/spend-intents.js';

const MAX_REMEMBERED = 200_000;
const READS_AT_ONCE = 32;

/**
 * Which queue entries are accepted captures: the spend intent's fate says CONSUMED by this payment.
 * A capture enqueues before it consumes, so an entry may still be deciding (or have lost); only
 * accepted ones settle. Once accepted always accepted, so the answer is remembered in the process
 * until the payment's batch ends: each entry costs one fate read per worker process.
 */
export class AcceptedCaptures {
  private readonly known = new Set<string>();

  async filter(c: Collections, entries: readonly SettlementQueueDoc[]): Promise<SettlementQueueDoc[]> {
    const unknown = entries.filter((e) => !this.known.has(e._id));
    // A new worker under a backlog meets thousands at once: read them a bounded number at a time.
    const fates: Awaited<ReturnType<typeof findSpendIntentFate>>[] = [];
    for (let i = 0; i < unknown.length; i += READS_AT_ONCE) {
      fates.push(...(await Promise.all(unknown.slice(i, i + READS_AT_ONCE).map((e) => findSpendIntentFate(c, e.spendIntentId)))));
    }
    const acceptedNow = new Set(unknown.filter((e, i) => fates[i]?.fate === 'CONSUMED' && fates[i]?.paymentId === e._id).map((e) => e._id));
    for (const id of acceptedNow) if (this.known.size < MAX_REMEMBERED) this.known.add(id);
    return entries.filter((e) => this.known.has(e._id) || acceptedNow.has(e._id));
  }

  forget(paymentIds: readonly string[]): void {
    for (const id of paymentIds) this.known.delete(id);
  }
}

