import { claimInsertFirst, type ClaimSteps } from './claim.js';
import type { Collections } from './collections.js';
import type { ToolIdempotencyDoc } from './documents.js';
import { deleteIfStill } from './guarded-delete.js';

/*
 * Claims of the agent side: an MCP tool call's idempotency key, and the one open spend intent of
 * an order (prepare_x402_payment). The caller judges a claim it finds held (replay, conflict, join).
 */

export function claimToolRecord<R>(c: Collections, steps: ClaimSteps<ToolIdempotencyDoc, R>): Promise<R> {
  return claimInsertFirst(c.toolIdempotency, steps);
}

/** Deletes claim `id` only while `still(stored)` holds (guarded-delete.ts). */
export function deleteToolRecordIfStill(c: Collections, id: string, still: (stored: ToolIdempotencyDoc) => boolean): Promise<boolean> {
  return deleteIfStill(c, c.toolIdempotency, id, still);
}

/** Points the claim at another spend intent, if it still names `from`. */
export async function repointToolRecord(c: Collections, id: string, from: string, to: string): Promise<void> {
  await c.toolIdempotency.updateOne({ _id: id, 'ref.spend_intent_id': from }, { $set: { 'ref.spend_intent_id': to } });
}
