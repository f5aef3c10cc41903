import { ledgerLineOf } from '../domain/payment-ledger.js';
import { closeHolds } from '../store/borrowers.js';
import type { SettlementQueueDoc } from '../store/documents.js';
import { recordLedgerLines } from '../store/payment-ledger.js';
import { markVoided } from '../store/payments.js';
import { allQueues, removeFromQueues } from '../store/settlement/queue.js';
import { announceVoid } from '../store/settlement/board.js';
import type { Store } from '../store/mongo.js';
import { emitWebhookEvents, type EmitDeps } from '../webhooks/emit.js';
import { notifyOne } from './notify-payments.js';
import { outcomeEvents } from './outcome-events.js';
import { finalReceipt } from './receipt.js';

export interface FinishVoidDeps extends EmitDeps {
  db: Store['db'];
}

/** Everything a void does once it holds the claim; each step is idempotent. */
export async function finishVoid(deps: FinishVoidDeps, entry: SettlementQueueDoc, voidedAt: string): Promise<void> {
  const { c } = deps;
  const outcome = { status: 'VOIDED', voidedAt } as const;
  await markVoided(c, entry._id, new Date(voidedAt));
  await announceVoid(c, entry._id, new Date(voidedAt));
  await closeHolds(c, entry.borrowerId, [entry.spendIntentId], 'available');
  const receipt = finalReceipt(entry, outcome);
  await recordLedgerLines(c, `void-${entry._id}`, [ledgerLineOf(receipt)]);
  await notifyOne(deps.temporal, deps.taskQueue, entry, outcome);
  await emitWebhookEvents(deps, `void-${entry._id}`, outcomeEvents([entry], [receipt], outcome));
  await removeFromQueues(c, await allQueues(deps.db), [entry._id]);
}
