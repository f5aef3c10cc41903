import { concat, encodeAbiParameters, keccak256, type Hex } from 'viem';

/** One settleBatch entry as it goes on chain: ids as bytes32 hex (see uuidToBytes32). */
export interface SettlementEntry {
  paymentId: Hex;
  borrowerId: Hex;
  merchantId: Hex;
  amount: bigint;
}

const entryParams = [{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }] as const;

/** keccak256 of the entry's 128 ABI bytes, as CreditSettlement hashes each calldata entry. */
export function settlementLeaf(entry: SettlementEntry): Hex {
  return keccak256(encodeAbiParameters(entryParams, [entry.paymentId, entry.borrowerId, entry.merchantId, entry.amount]));
}

function hashPair(left: Hex, right: Hex): Hex {
  return keccak256(concat([left, right]));
}

/** The next level up: node i = keccak256(node 2i ‖ node 2i+1); an odd last node is promoted unchanged. */
function parentLevel(level: readonly Hex[]): Hex[] {
  const up: Hex[] = [];
  for (let i = 0; i + 1 < level.length; i += 2) up.push(hashPair(level[i]!, level[i + 1]!));
  if (level.length % 2 === 1) up.push(level[level.length - 1]!);
  return up;
}

/** The batch root CreditSettlement stores in batchRoot(batchId). */
export function entriesRoot(entries: readonly SettlementEntry[]): Hex {
  if (entries.length === 0) throw new RangeError('a batch needs at least one entry');
  let level = entries.map(settlementLeaf);
  while (level.length > 1) level = parentLevel(level);
  return level[0]!;
}

/**
 * The proof refundWithAuthorization takes for entries[index]: siblings bottom-up, and bit k of path set when the
 * node is the right child at step k. A level where the node is promoted adds neither a sibling nor a bit.
 */
export function entryProof(entries: readonly SettlementEntry[], index: number): { proof: Hex[]; path: bigint } {
  if (!Number.isInteger(index) || index < 0 || index >= entries.length) throw new RangeError(`no entry ${index} in a batch of ${entries.length}`);
  const proof: Hex[] = [];
  let path = 0n;
  let level = entries.map(settlementLeaf);
  let i = index;
  while (level.length > 1) {
    const sibling = i ^ 1;
    if (sibling < level.length) {
      if (i % 2 === 1) path |= 1n << BigInt(proof.length);
      proof.push(level[sibling]!);
    }
    level = parentLevel(level);
    i >>= 1;
  }
  return { proof, path };
}
