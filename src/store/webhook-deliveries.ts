import type { Collections } from './collections.js';
import type { WebhookDeliveryDoc } from './documents.js';
import { findByIds } from './find-by-ids.js';
import { isDuplicateKey } from './mongo.js';

const counterId = (endpointId: string) => `n|${endpointId}`;
const slotId = (endpointId: string, seq: number) => `s|${endpointId}|${String(seq).padStart(12, '0')}`;

export function findWebhookDelivery(c: Collections, id: string): Promise<WebhookDeliveryDoc | null> {
  return c.webhookDeliveries.findOne({ _id: id });
}

async function nextSeq(c: Collections, endpointId: string): Promise<number> {
  const bump = () => c.webhookDeliveryLog.findOneAndUpdate({ _id: counterId(endpointId) }, { $inc: { next: 1 } }, { upsert: true, returnDocument: 'after' });
  // Two first deliveries at once: one upsert inserts, the other meets its key and increments.
  const counter = await bump().catch((err: unknown) => (isDuplicateKey(err) ? bump() : Promise.reject(err)));
  return counter!.next!;
}

/**
 * The delivery of this id, recorded first if it is new: it takes the endpoint's next place in the
 * log, so listings read it by _id. A delivery recorded twice at once keeps the first; the other's
 * place names the same delivery and the listing shows it once.
 */
export async function openWebhookDelivery(c: Collections, doc: Omit<WebhookDeliveryDoc, 'seq'>): Promise<WebhookDeliveryDoc> {
  const known = await findWebhookDelivery(c, doc._id);
  if (known) return known;
  const seq = await nextSeq(c, doc.endpointId);
  await c.webhookDeliveryLog.insertOne({ _id: slotId(doc.endpointId, seq), deliveryId: doc._id });
  const full = { ...doc, seq };
  try {
    await c.webhookDeliveries.insertOne(full);
    return full;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return (await findWebhookDelivery(c, doc._id))!;
  }
}

export type DeliveryAttempt = Pick<WebhookDeliveryDoc, 'attempts' | 'outcome' | 'lastAttemptAt' | 'lastStatusCode' | 'lastLatencyMs' | 'lastError' | 'nextRetryAt'>;

/** Records an attempt's result; a later attempt number never loses to an earlier one that wrote late. */
export async function recordWebhookAttempt(c: Collections, id: string, attempt: DeliveryAttempt): Promise<void> {
  const set = Object.fromEntries(Object.entries(attempt).filter(([, v]) => v !== undefined));
  const unset = Object.keys(attempt).filter((k) => attempt[k as keyof DeliveryAttempt] === undefined);
  await c.webhookDeliveries.updateOne(
    { _id: id, attempts: { $lte: attempt.attempts } },
    { $set: set, ...(unset.length ? { $unset: Object.fromEntries(unset.map((k) => [k, ''])) } : {}) },
  );
}

/**
 * An endpoint's deliveries, newest first, from place `below` down (exclusive; absent: from the
 * newest), at most `limit` of them and whether more follow. Reads the log's places by _id a
 * window at a time, so a listing costs reads in proportion to its page, not to the log.
 */
export async function webhookDeliveryPage(c: Collections, endpointId: string, limit: number, below?: number): Promise<{ deliveries: WebhookDeliveryDoc[]; hasMore: boolean }> {
  let top = below === undefined ? ((await c.webhookDeliveryLog.findOne({ _id: counterId(endpointId) }))?.next ?? 0) : below - 1;
  const out: WebhookDeliveryDoc[] = [];
  const seen = new Set<string>();
  while (top > 0 && out.length <= limit) {
    const seqs = Array.from({ length: Math.min(top, limit + 1) }, (_, i) => top - i);
    const slots = await findByIds(c.webhookDeliveryLog, seqs.map((s) => slotId(endpointId, s)));
    const ids = slots.map((s) => s.deliveryId!).filter((id) => !seen.has(id));
    for (const d of (await findByIds(c.webhookDeliveries, ids)).sort((a, b) => b.seq - a.seq)) {
      if (d.endpointId !== endpointId || seen.has(d._id)) continue;
      seen.add(d._id);
      out.push(d);
    }
    top -= seqs.length;
  }
  return { deliveries: out.slice(0, limit), hasMore: out.length > limit };
}
