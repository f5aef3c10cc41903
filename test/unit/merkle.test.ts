import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes } from '@noble/hashes/utils.js';
import type { Hex } from 'viem';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { entriesRoot, entryProof, settlementLeaf, type SettlementEntry } from '../../src/chain/merkle.js';
import { refundNonce } from '../../src/chain/refund.js';

const SIZES = [1, 2, 3, 5, 8];

function entries(n: number): SettlementEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    paymentId: uuidToBytes32(randomUUID()),
    borrowerId: uuidToBytes32(randomUUID()),
    merchantId: uuidToBytes32(randomUUID()),
    amount: 1_000n + BigInt(i),
  }));
}

// An independent model: @noble keccak over hand-built bytes, the tree written out recursively.
const bytes = (h: Hex) => hexToBytes(h.slice(2));
const hex = (b: Uint8Array): Hex => `0x${bytesToHex(b)}`;
const word = (n: bigint) => hexToBytes(n.toString(16).padStart(64, '0'));
const h = (...parts: Uint8Array[]) => keccak_256(concatBytes(...parts));
const leaf = (e: SettlementEntry) => h(bytes(e.paymentId), bytes(e.borrowerId), bytes(e.merchantId), word(e.amount));

function modelRoot(nodes: Uint8Array[]): Uint8Array {
  if (nodes.length === 1) return nodes[0]!;
  const up: Uint8Array[] = [];
  for (let i = 0; i < nodes.length; i += 2) up.push(i + 1 < nodes.length ? h(nodes[i]!, nodes[i + 1]!) : nodes[i]!);
  return modelRoot(up);
}

function verify(root: Hex, entry: SettlementEntry, proof: readonly Hex[], path: bigint): boolean {
  if (path >> BigInt(proof.length) !== 0n) return false;
  let node = leaf(entry);
  proof.forEach((sibling, k) => {
    node = (path >> BigInt(k)) & 1n ? h(bytes(sibling), node) : h(node, bytes(sibling));
  });
  return hex(node) === root;
}

describe('chain: batch Merkle tree', () => {
  it('hashes a leaf as keccak256 of the four 32-byte words', () => {
    const [e] = entries(1);
    assert.equal(settlementLeaf(e!), hex(leaf(e!)));
  });

  it('gives the same root as an independent recomputation for 1, 2, 3, 5 and 8 entries', () => {
    for (const n of SIZES) {
      const list = entries(n);
      assert.equal(entriesRoot(list), hex(modelRoot(list.map(leaf))), `batch of ${n}`);
    }
    // Written out: an odd last node moves up unchanged.
    const [a, b, c, d, e] = entries(5).map(leaf) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array];
    assert.equal(hex(modelRoot([a, b, c])), hex(h(h(a, b), c)));
    assert.equal(hex(modelRoot([a, b, c, d, e])), hex(h(h(h(a, b), h(c, d)), e)));
    assert.throws(() => entriesRoot([]), RangeError);
  });

  it('proves every entry of every size, and skips the levels where a node is promoted', () => {
    for (const n of SIZES) {
      const list = entries(n);
      const root = entriesRoot(list);
      list.forEach((entry, i) => {
        const { proof, path } = entryProof(list, i);
        assert.ok(verify(root, entry, proof, path), `entry ${i} of ${n}`);
      });
    }
    const five = entries(5);
    assert.deepEqual(entryProof(five, 4), { proof: [hex(h(h(leaf(five[0]!), leaf(five[1]!)), h(leaf(five[2]!), leaf(five[3]!))))], path: 1n });
    assert.deepEqual(entryProof(entries(1), 0), { proof: [], path: 0n });
    assert.throws(() => entryProof(five, 5), RangeError);
  });

  it('does not accept one entry\'s proof for another, nor an altered entry', () => {
    for (const n of SIZES.filter((s) => s > 1)) {
      const list = entries(n);
      const root = entriesRoot(list);
      list.forEach((_, i) => {
        const { proof, path } = entryProof(list, i);
        list.forEach((other, j) => {
          if (j !== i) assert.equal(verify(root, other, proof, path), false, `proof ${i} for entry ${j} of ${n}`);
        });
        assert.equal(verify(root, { ...list[i]!, amount: list[i]!.amount + 1n }, proof, path), false);
      });
    }
  });

  it('binds a refund nonce to the payment in its upper 16 bytes', () => {
    const paymentId = randomUUID();
    const nonce = refundNonce(paymentId, new Uint8Array(16).fill(0xab));
    assert.equal(nonce, `0x${paymentId.replaceAll('-', '')}${'ab'.repeat(16)}`);
    assert.throws(() => refundNonce(paymentId, new Uint8Array(15)), RangeError);
  });
});
