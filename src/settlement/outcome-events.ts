import type { PaymentOutcome, Receipt } from '../domain/payment.js';
import { webhookEvent } from '../domain/webhook-events.js';
import type { SettlementQueueDoc } from '../store/documents.js';
import type { MerchantEvent } from '../webhooks/emit.js';

/** The webhook event of each payment a batch end (or a void) finished, beside its final receipt. */
export function outcomeEvents(entries: readonly SettlementQueueDoc[], receipts: readonly Receipt[], o: PaymentOutcome): MerchantEvent[] {
  return entries.map((e, i) => ({ merchantId: e.merchantId, event: webhookEvent(receipts[i]!, o) }));
}
