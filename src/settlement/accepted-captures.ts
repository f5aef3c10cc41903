import type { Collections } from '../store/collections.js';
import type { SettlementQueueDoc, SpendIntentFateDoc } from '../store/documents.js';
import { findSpendIntentFates } from '../store/spend-intents.js';

const MAX_REMEMBERED = 200_000;

/**
 * Which queue entries are accepted captures: the spend intent's fate says CONSUMED by this payment.
 * A capture enqueues before it consumes, so an entry may still be deciding (or have lost); only
 * accepted ones settle. Once accepted always accepted, so the answer is remembered in the process
 * until the payment's batch ends. The entries not known yet cost one read per call (per 500 of
 * them: a new worker meeting a backlog), not one per entry.
 */
export class AcceptedCaptures {
  private readonly known = new Set<string>();

  async filter(c: Collections, entries: readonly SettlementQueueDoc[]): Promise<SettlementQueueDoc[]> {
    const unknown = entries.filter((e) => !this.known.has(e._id));
    const fates = unknown.length > 0 ? await findSpendIntentFates(c, unknown.map((e) => e.spendIntentId)) : new Map();
    const acceptedNow = new Set(unknown.filter((e) => isAcceptedBy(fates.get(e.spendIntentId), e._id)).map((e) => e._id));
    for (const id of acceptedNow) if (this.known.size < MAX_REMEMBERED) this.known.add(id);
    return entries.filter((e) => this.known.has(e._id) || acceptedNow.has(e._id));
  }

  forget(paymentIds: readonly string[]): void {
    for (const id of paymentIds) this.known.delete(id);
  }
}

function isAcceptedBy(fate: SpendIntentFateDoc | undefined, paymentId: string): boolean {
  return fate?.fate === 'CONSUMED' && fate.paymentId === paymentId;
}
