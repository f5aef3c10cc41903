/**
 * Store against chain, for one merchant's settled payments: every difference between what the
 * facilitator recorded as CONFIRMED and the contract's PaymentSettled events, and between the
 * refunds it recorded as SUCCEEDED and the contract's Refunded events. Pure: the caller reads both
 * sides.
 */

export interface StoreSettlement {
  paymentId: string;
  amount: string;
  transaction: string;
  blockNumber: string;
}

export interface ChainSettlement {
  paymentId: string;
  amount: string;
  transaction: string;
  blockNumber: string;
}

export type Difference =
  | { kind: 'missing_on_chain'; paymentId: string; store: StoreSettlement }
  | { kind: 'missing_in_store'; paymentId: string; chain: ChainSettlement }
  | { kind: 'settled_more_than_once'; paymentId: string; chain: ChainSettlement[] }
  | { kind: 'amount_differs' | 'transaction_differs' | 'block_differs'; paymentId: string; store: StoreSettlement; chain: ChainSettlement }
  | { kind: 'refund_missing_on_chain'; paymentId: string; store: RefundFact }
  | { kind: 'refund_missing_in_store'; paymentId: string; chain: RefundFact }
  | { kind: 'refund_amount_differs' | 'refund_transaction_differs'; paymentId: string; store: RefundFact; chain: RefundFact };

/** One refund: the store's SUCCEEDED record or the chain's Refunded event. The nonce identifies it on both sides. */
export interface RefundFact {
  paymentId: string;
  nonce: string;
  amount: string;
  transaction: string;
}

export function reconcile(store: readonly StoreSettlement[], chain: readonly ChainSettlement[]): Difference[] {
  const out: Difference[] = [];
  const onChain = new Map<string, ChainSettlement[]>();
  for (const e of chain) onChain.set(e.paymentId, [...(onChain.get(e.paymentId) ?? []), e]);
  const inStore = new Map(store.map((s) => [s.paymentId, s]));
  for (const s of store) {
    const events = onChain.get(s.paymentId) ?? [];
    if (events.length === 0) {
      out.push({ kind: 'missing_on_chain', paymentId: s.paymentId, store: s });
      continue;
    }
    if (events.length > 1) out.push({ kind: 'settled_more_than_once', paymentId: s.paymentId, chain: events });
    const e = events[0]!;
    if (e.amount !== s.amount) out.push({ kind: 'amount_differs', paymentId: s.paymentId, store: s, chain: e });
    if (e.transaction.toLowerCase() !== s.transaction.toLowerCase()) out.push({ kind: 'transaction_differs', paymentId: s.paymentId, store: s, chain: e });
    if (e.blockNumber !== s.blockNumber) out.push({ kind: 'block_differs', paymentId: s.paymentId, store: s, chain: e });
  }
  for (const [paymentId, events] of onChain) {
    if (inStore.has(paymentId)) continue;
    out.push({ kind: 'missing_in_store', paymentId, chain: events[0]! });
    if (events.length > 1) out.push({ kind: 'settled_more_than_once', paymentId, chain: events });
  }
  return out;
}

/** Refunds of the same payments on both sides, matched by their authorization nonce. */
export function reconcileRefunds(store: readonly RefundFact[], chain: readonly RefundFact[]): Difference[] {
  const out: Difference[] = [];
  const onChain = new Map(chain.map((e) => [e.nonce.toLowerCase(), e]));
  const inStore = new Set(store.map((s) => s.nonce.toLowerCase()));
  for (const s of store) {
    const e = onChain.get(s.nonce.toLowerCase());
    if (!e) {
      out.push({ kind: 'refund_missing_on_chain', paymentId: s.paymentId, store: s });
      continue;
    }
    if (e.amount !== s.amount || e.paymentId !== s.paymentId) out.push({ kind: 'refund_amount_differs', paymentId: s.paymentId, store: s, chain: e });
    if (e.transaction.toLowerCase() !== s.transaction.toLowerCase()) out.push({ kind: 'refund_transaction_differs', paymentId: s.paymentId, store: s, chain: e });
  }
  for (const e of chain) if (!inStore.has(e.nonce.toLowerCase())) out.push({ kind: 'refund_missing_in_store', paymentId: e.paymentId, chain: e });
  return out;
}
