/** What the node says of the settler's nonces at one instant. */
export interface NodeNonces {
  /** eth_getTransactionCount at 'latest': nonces below it are mined. */
  mined: number;
  /** eth_getTransactionCount at 'pending': the node holds nothing it could mine at or above it. */
  pending: number;
}

/** What the nonce manager knows of its own nonces. */
export interface OwnNonces {
  /** The nonce the next send would take. */
  next: number;
  /** The highest `mined` seen since the last pass that put everything back. */
  minedSeen: number;
  /** Nonces it holds a signed transaction for (mined ones within memory, and those in flight). */
  known: ReadonlySet<number>;
  /** The lowest unmined nonce whose transaction the node answered unknown to (its mempool dropped it). */
  forgotten?: number;
}

export interface ResendPlan {
  /** Known transactions to broadcast again, as signed, in nonce order. */
  resend: number[];
  /** Nonces below a known one that nothing of ours fills: an empty transaction must, or everything above waits forever. */
  fill: number[];
  /** The nonce the next send should take: below `next` when the top of the range is unknown (nothing of ours to put back there). */
  next: number;
}

/**
 * Whether the node lost transactions the nonce manager sent, and what to put back. The node lost
 * some when its pending nonce is below ours (it restarted on an older state, or its mempool
 * forgot them), when its mined nonce went down (blocks dropped: a reorg, an older state), when
 * it no longer knows the lowest transaction we wait on, or when the nonce it would mine next is
 * one we hold nothing for while we hold later ones (a hole). From the lowest such nonce (never below
 * the mined one) every known transaction is sent again exactly as signed (same nonce, gas, fees:
 * the same hash, so nothing recorded by hash goes stale); an unknown nonce below a known one is
 * a hole to fill; unknown nonces above the highest known one, which the node does not hold
 * either, are given back to new sends. Two different transactions of ours never take one nonce.
 * Null when nothing was lost.
 */
export function planResend(node: NodeNonces, own: OwnNonces): ResendPlan | null {
  const starts: number[] = [];
  if (node.pending < own.next) starts.push(node.pending);
  if (node.mined < own.minedSeen) starts.push(node.mined);
  if (own.forgotten !== undefined) starts.push(own.forgotten);
  // The node mines nothing of ours while the nonce it would mine next is one we never sent.
  if (node.mined < own.next && !own.known.has(node.mined) && [...own.known].some((n) => n > node.mined)) starts.push(node.mined);
  if (starts.length === 0) return null;
  const from = Math.max(Math.min(...starts), node.mined);
  if (from >= own.next) return null;
  let top = -1;
  for (let n = own.next - 1; n >= from; n--) {
    if (own.known.has(n)) {
      top = n;
      break;
    }
  }
  // Nothing of ours to put back: new sends take over from where the node holds nothing.
  if (top < 0) return { resend: [], fill: [], next: Math.max(from, Math.min(node.pending, own.next)) };
  const resend: number[] = [];
  const fill: number[] = [];
  for (let n = from; n <= top; n++) (own.known.has(n) ? resend : fill).push(n);
  return { resend, fill, next: top + 1 };
}
