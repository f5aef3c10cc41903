import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { encodeFunctionData } from 'viem';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { bytes32ToUuid, uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { buildSettleBatchArgs, type SettlementItem } from '../../src/chain/settlement.js';
import { repaymentNonce } from '../../src/chain/eip3009.js';

const BATCH = '0b6f1c3e-9d8a-4f5e-8c7b-6a5d4c3b2a19';
const B1 = '11111111-1111-4111-8111-111111111111';
const B2 = '22222222-2222-4222-8222-222222222222';
const M1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const M2 = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const PAY1 = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01' as const;
const PAY2 = '0x00000000000000000000000000000000000000f2' as const;

function item(borrowerId: string, merchantId: string, payTo: `0x${string}`, amount: bigint, paymentId = randomUUID()): SettlementItem {
  return { paymentId, borrowerId, merchantId, payTo, amount };
}

describe('chain: ids', () => {
  it('maps a UUID to its 16 bytes left-padded to bytes32 and back', () => {
    const id = 'F47AC10B-58CC-4372-A567-0E02B2C3D479';
    const hex = uuidToBytes32(id);
    assert.equal(hex, '0x00000000000000000000000000000000f47ac10b58cc4372a5670e02b2c3d479');
    assert.equal(bytes32ToUuid(hex), id.toLowerCase());
    for (let i = 0; i < 50; i++) {
      const u = randomUUID();
      assert.equal(bytes32ToUuid(uuidToBytes32(u)), u);
    }
  });

  it('rejects what is not a UUID or not left-padded', () => {
    assert.throws(() => uuidToBytes32('not-a-uuid'), TypeError);
    assert.throws(() => uuidToBytes32('f47ac10b58cc4372a5670e02b2c3d479'), TypeError);
    assert.throws(() => bytes32ToUuid('0x01000000000000000000000000000000f47ac10b58cc4372a5670e02b2c3d479'), TypeError);
    assert.throws(() => bytes32ToUuid('0xf47ac10b58cc4372a5670e02b2c3d479'), TypeError);
  });

  it('binds a repayment nonce to the borrower in its upper 16 bytes', () => {
    const nonce = repaymentNonce(B1, new Uint8Array(16).fill(0xab));
    assert.equal(nonce, `0x${B1.replace(/-/g, '')}${'ab'.repeat(16)}`);
    assert.notEqual(repaymentNonce(B1), repaymentNonce(B1));
  });
});

describe('chain: buildSettleBatchArgs', () => {
  const items = [
    item(B1, M1, PAY1, 100n),
    item(B2, M2, PAY2, 7n),
    item(B1, M1, PAY1.toLowerCase() as `0x${string}`, 50n),
    item(B2, M1, PAY1, 3n),
    item(B1, M2, PAY2, 1n),
  ];

  it('keeps one entry per payment, in order, with bytes32 ids', () => {
    const [batchId, entries] = buildSettleBatchArgs(BATCH, items);
    assert.equal(batchId, uuidToBytes32(BATCH));
    assert.deepEqual(
      entries.map((e) => [bytes32ToUuid(e.paymentId), bytes32ToUuid(e.borrowerId), bytes32ToUuid(e.merchantId), e.amount]),
      items.map((i) => [i.paymentId, i.borrowerId, i.merchantId, i.amount]),
    );
  });

  it('sums payouts per payTo (case-insensitive) and debits per borrower, in first-appearance order', () => {
    const [, , payouts, debits] = buildSettleBatchArgs(BATCH, items);
    assert.deepEqual(payouts, [
      { payTo: PAY1.toLowerCase(), amount: 153n },
      { payTo: PAY2, amount: 8n },
    ]);
    assert.deepEqual(debits, [
      { borrowerId: uuidToBytes32(B1), amount: 151n },
      { borrowerId: uuidToBytes32(B2), amount: 10n },
    ]);
    const total = items.reduce((s, i) => s + i.amount, 0n);
    assert.equal(payouts.reduce((s, p) => s + p.amount, 0n), total);
    assert.equal(debits.reduce((s, d) => s + d.amount, 0n), total);
  });

  it('is deterministic: the same items give the same calldata', () => {
    const encode = () => encodeFunctionData({ abi: creditSettlementAbi, functionName: 'settleBatch', args: buildSettleBatchArgs(BATCH, items) });
    assert.equal(encode(), encode());
    const reordered = [items[1]!, items[0]!, ...items.slice(2)];
    const [, , payouts] = buildSettleBatchArgs(BATCH, reordered);
    assert.equal(payouts[0]!.payTo, PAY2);
  });

  it('refuses an empty batch, a repeated payment, a non-positive amount and a bad address', () => {
    assert.throws(() => buildSettleBatchArgs(BATCH, []), RangeError);
    const dup = item(B1, M1, PAY1, 1n);
    assert.throws(() => buildSettleBatchArgs(BATCH, [dup, { ...dup }]), /appears twice/);
    assert.throws(() => buildSettleBatchArgs(BATCH, [item(B1, M1, PAY1, 0n)]), /non-positive/);
    assert.throws(() => buildSettleBatchArgs(BATCH, [item(B1, M1, '0x1234', 1n)]), /payTo/);
    assert.throws(() => buildSettleBatchArgs('batch-1', [item(B1, M1, PAY1, 1n)]), /not a UUID/);
  });
});
