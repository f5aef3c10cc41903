import {
  decodeFunctionData,
  getAbiItem,
  parseEventLogs,
  parseSignature,
  type Address,
  type Hash,
  type Hex,
  type Log,
} from 'viem';
import { creditSettlementAbi } from './abi.js';
import type { ChainContext, ChainReadContext } from './context.js';
import type { Deployment } from './deploy.js';
import { authorizationToSettlement, idBoundNonce, receiveWithAuthorizationTypedData, type Eip3009Authorization } from './eip3009.js';
import { ContractRevertedError } from './errors.js';
import { entryProof, type SettlementEntry } from './merkle.js';
import { readById } from './read-by-id.js';
import { sendSettlementCall } from './send-settlement-call.js';
import { bytes32ToUuid, uuidToBytes32 } from '@credit-facilitator/wire/ids';

/** A refund nonce, bound to the payment: a signed refund can only ever be redeemed for the named payment. */
export function refundNonce(paymentId: string, random?: Uint8Array): Hex {
  return idBoundNonce('refund', paymentId, random);
}

/** The ReceiveWithAuthorization the refunding party (the merchant's payout address) signs: `value` back to the pool. */
export function buildRefundAuthorization(
  d: Deployment,
  opts: { paymentId: string; from: Address; value: bigint; validForSeconds?: number; nowSeconds?: number; nonce?: Hex },
): Eip3009Authorization {
  return authorizationToSettlement(d, { ...opts, nonce: opts.nonce ?? refundNonce(opts.paymentId) });
}

export function refundTypedData(d: Deployment, auth: Eip3009Authorization) {
  return receiveWithAuthorizationTypedData(d, auth);
}

/**
 * The batch id and entries a settleBatch transaction carried, decoded from its calldata. Whether it settled is
 * the chain's to say: a refund against entries that are not the stored batch root reverts NotInBatch.
 */
export async function settledBatchEntries(ctx: ChainReadContext, transaction: Hash): Promise<{ batchId: Hex; entries: SettlementEntry[] }> {
  const tx = await ctx.publicClient.getTransaction({ hash: transaction });
  if (tx.to?.toLowerCase() !== ctx.deployment.settlement.toLowerCase()) {
    throw new TypeError(`transaction ${transaction} is not a call to the settlement contract ${ctx.deployment.settlement}`);
  }
  let decoded;
  try {
    decoded = decodeFunctionData({ abi: creditSettlementAbi, data: tx.input });
  } catch {
    throw new TypeError(`transaction ${transaction} is not a settleBatch call`);
  }
  if (decoded.functionName !== 'settleBatch') throw new TypeError(`transaction ${transaction} calls ${decoded.functionName}, not settleBatch`);
  const [batchId, entries] = decoded.args;
  return { batchId, entries: entries.map((e) => ({ ...e })) };
}

/** The contract refused the refund in simulation (not in the batch, over the payment, a used nonce...). */
export class RefundRevertedError extends ContractRevertedError {
  override name = 'RefundRevertedError';
}

/** Redeems a signed refund of one payment of a settled batch; returns the transaction hash once broadcast. */
export async function submitRefund(
  ctx: ChainContext,
  args: { batchId: Hex; entries: readonly SettlementEntry[]; paymentId: string; authorization: Eip3009Authorization; signature: Hex },
): Promise<Hash> {
  const paymentId = uuidToBytes32(args.paymentId);
  const index = args.entries.findIndex((e) => e.paymentId.toLowerCase() === paymentId);
  if (index < 0) throw new RangeError(`payment ${args.paymentId} is not among the batch's entries`);
  const a = args.authorization;
  if (a.to.toLowerCase() !== ctx.deployment.settlement.toLowerCase()) throw new RangeError('refund must be authorized to the settlement contract');
  const { proof, path } = entryProof(args.entries, index);
  const sig = parseSignature(args.signature);
  const auth = { from: a.from, value: a.value, validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce, v: 27 + sig.yParity, r: sig.r, s: sig.s };
  return sendSettlementCall(ctx, {
    functionName: 'refundWithAuthorization',
    args: [args.batchId, args.entries[index]!, proof, path, auth],
    revertsAs: RefundRevertedError,
  });
}

/** The cumulative amount refunded for a payment. */
export async function refundedOf(ctx: ChainReadContext, paymentId: string): Promise<bigint> {
  return readById(ctx, 'refundedOf', paymentId);
}

export interface RefundedEvent {
  paymentId: string;
  borrowerId: string;
  merchantId: string;
  from: Address;
  nonce: Hex;
  amount: bigint;
  debtReduced: bigint;
  txHash: Hash;
  blockNumber: bigint;
  logIndex: number;
}

/** The Refunded events among mined logs (e.g. a receipt's), optionally only those the given settlement contract emitted. */
export function refundLogsIn(logs: readonly Log<bigint, number, false>[], settlement?: Address): RefundedEvent[] {
  const from = settlement?.toLowerCase();
  const own = logs.filter((l) => !l.removed && (from === undefined || l.address.toLowerCase() === from));
  return parseEventLogs({ abi: creditSettlementAbi, eventName: 'Refunded', logs: own }).map((l) => ({
    paymentId: bytes32ToUuid(l.args.paymentId),
    borrowerId: bytes32ToUuid(l.args.borrowerId),
    merchantId: bytes32ToUuid(l.args.merchantId),
    from: l.args.from,
    nonce: l.args.nonce,
    amount: l.args.amount,
    debtReduced: l.args.debtReduced,
    txHash: l.transactionHash,
    blockNumber: l.blockNumber,
    logIndex: l.logIndex,
  }));
}

/** Every Refunded event in a block range (default: the deployment block to the head), read in chunks, oldest first. */
export async function readRefundedEvents(
  ctx: ChainReadContext,
  opts: { fromBlock?: bigint; toBlock?: bigint; chunkSize?: bigint } = {},
): Promise<RefundedEvent[]> {
  const chunk = opts.chunkSize ?? 10_000n;
  const last = opts.toBlock ?? (await ctx.publicClient.getBlockNumber({ cacheTime: 0 }));
  const event = getAbiItem({ abi: creditSettlementAbi, name: 'Refunded' });
  const events: RefundedEvent[] = [];
  for (let from = opts.fromBlock ?? BigInt(ctx.deployment.deployBlock); from <= last; from += chunk) {
    const to = from + chunk - 1n < last ? from + chunk - 1n : last;
    const logs = await ctx.publicClient.getLogs({ address: ctx.deployment.settlement, event, fromBlock: from, toBlock: to });
    events.push(...refundLogsIn(logs, ctx.deployment.settlement));
  }
  return events;
}
