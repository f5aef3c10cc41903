import type { AgentKeyDoc, BorrowerDoc } from '../store/documents.js';

/** A borrower's credit as get_borrower_status and the borrower page show it (base units, as strings). */
export function creditView(b: BorrowerDoc): { limit: string; available: string; held: string; debt: string } {
  const held = Object.values(b.holds ?? {}).reduce((sum, v) => sum + v, 0);
  return { limit: String(b.creditLimit), available: String(b.available), held: String(held), debt: String(b.debt) };
}

/** An agent key as get_borrower_status and the borrower page show it: the key and the limits its grant sets. */
export function agentKeyView(k: AgentKeyDoc) {
  return {
    key_id: k._id,
    public_key: k.publicKey,
    status: k.status,
    per_payment_limit: k.grant?.perPaymentLimit ?? null,
    daily_limit: k.grant?.dailyLimit ?? null,
    expires_at: k.grant?.expiresAt ?? null,
  };
}
