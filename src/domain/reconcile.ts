/**
 * Store against chain, for one merchant's settled payments: every difference between what the
 * facilitator recorded as CONFIRMED and the contract's PaymentSettled events. Pure: the caller
 * reads both sides.
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
  | { kind: 'amount_differs' | 'transaction_differs' | 'block_differs'; paymentId: string; store: StoreSettlement; chain: ChainSettlement };

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
