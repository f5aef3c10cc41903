import { setTimeout as sleep } from 'node:timers/promises';
import {
  BlockNotFoundError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  getAbiItem,
  isAddress,
  parseEventLogs,
  type Hash,
  type Hex,
  type Log,
  type TransactionReceipt,
} from 'viem';
import { creditSettlementAbi, testUsdcAbi } from './abi.js';
import type { ChainContext, ChainReadContext } from './context.js';
import { ContractRevertedError } from './errors.js';
import { bytes32ToUuid, uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { entriesRoot, type SettlementEntry } from './merkle.js';
import { readById } from './read-by-id.js';
import { sendSettlementCall } from './send-settlement-call.js';

export interface SettlementItem {
  paymentId: string;
  borrowerId: string;
  merchantId: string;
  payTo: `0x${string}`;
  amount: bigint;
}

type Bytes32 = `0x${string}`;
export type SettleBatchArgs = readonly [
  batchId: Bytes32,
  entries: readonly SettlementEntry[],
  payouts: readonly { payTo: `0x${string}`; amount: bigint }[],
  debits: readonly { borrowerId: Bytes32; amount: bigint }[],
];

/**
 * settleBatch arguments: one entry per item, payouts summed per payTo (lowercased) and debits per borrower,
 * each in order of first appearance, so equal input always gives equal calldata.
 */
export function buildSettleBatchArgs(batchId: string, items: readonly SettlementItem[]): SettleBatchArgs {
  if (items.length === 0) throw new RangeError('a batch needs at least one payment');
  const seen = new Set<string>();
  const payouts = new Map<string, bigint>();
  const debits = new Map<Bytes32, bigint>();
  const entries = items.map((item) => {
    const paymentId = uuidToBytes32(item.paymentId);
    if (seen.has(paymentId)) throw new RangeError(`payment ${item.paymentId} appears twice in the batch`);
    seen.add(paymentId);
    if (item.amount <= 0n) throw new RangeError(`payment ${item.paymentId} has a non-positive amount`);
    if (!isAddress(item.payTo, { strict: false })) throw new TypeError(`payment ${item.paymentId} has an invalid payTo`);
    const payTo = item.payTo.toLowerCase();
    const borrowerId = uuidToBytes32(item.borrowerId);
    payouts.set(payTo, (payouts.get(payTo) ?? 0n) + item.amount);
    debits.set(borrowerId, (debits.get(borrowerId) ?? 0n) + item.amount);
    return { paymentId, borrowerId, merchantId: uuidToBytes32(item.merchantId), amount: item.amount };
  });
  return [
    uuidToBytes32(batchId),
    entries,
    [...payouts].map(([payTo, amount]) => ({ payTo: payTo as `0x${string}`, amount })),
    [...debits].map(([borrowerId, amount]) => ({ borrowerId, amount })),
  ];
}

/** The contract refused the batch in simulation (e.g. a sum mismatch, an unknown settler, an empty pool). */
export class SettlementRevertedError extends ContractRevertedError {
  override name = 'SettlementRevertedError';
}

export class ConfirmationTimeoutError extends Error {
  override name = 'ConfirmationTimeoutError';
}

export type SubmitResult = { kind: 'sent'; txHash: Hash } | { kind: 'already_settled' };

/**
 * Sends settleBatch unless the batch is already settled. Node and network errors propagate (the activity
 * retries); a simulated revert throws SettlementRevertedError.
 */
export async function submitSettleBatch(ctx: ChainContext, batchId: string, items: readonly SettlementItem[]): Promise<SubmitResult> {
  const args = buildSettleBatchArgs(batchId, items);
  if (await isBatchSettled(ctx, batchId)) return { kind: 'already_settled' };
  const txHash = await sendSettlementCall(ctx, {
    functionName: 'settleBatch',
    args,
    revertsAs: SettlementRevertedError,
    describedAs: `settleBatch ${batchId}`,
    gasLimit: (estimate) => estimate + estimate / 5n + 10_000n,
    // false: another transaction settled the batch since the check above
    sendIf: (settles) => settles,
  });
  return txHash === null ? { kind: 'already_settled' } : { kind: 'sent', txHash };
}

export async function isBatchSettled(ctx: ChainReadContext, batchId: string): Promise<boolean> {
  return readById(ctx, 'batchSettled', batchId);
}

/** A settled batch's content on chain beside what these items would have put there: both entry roots (zero root on chain: not settled). */
export interface SettledContent {
  onChain: Hex;
  expected: Hex;
  matches: boolean;
}

/**
 * Compares the root the contract stored for batchId (keccak of its entries: ids, borrowers,
 * merchants, amounts, in order) with the root of `items`: equal roots mean the chain paid exactly
 * these payments, each once, in this batch.
 */
export async function settledContentOf(ctx: ChainReadContext, batchId: string, items: readonly SettlementItem[]): Promise<SettledContent> {
  const expected = entriesRoot(buildSettleBatchArgs(batchId, items)[1]);
  const onChain = await readById(ctx, 'batchRoot', batchId);
  return { onChain, expected, matches: onChain.toLowerCase() === expected.toLowerCase() };
}

export interface BatchSettlementLog {
  txHash: Hash;
  blockNumber: bigint;
  blockHash: Hash;
  logIndex: number;
}

/** The BatchSettled log for batchId, scanning from the head back to the deployment block in chunks. */
export async function findBatchSettlement(
  ctx: ChainReadContext,
  batchId: string,
  opts: { chunkSize?: bigint } = {},
): Promise<BatchSettlementLog | null> {
  const chunk = opts.chunkSize ?? 10_000n;
  const first = BigInt(ctx.deployment.deployBlock);
  const event = getAbiItem({ abi: creditSettlementAbi, name: 'BatchSettled' });
  let to = await ctx.publicClient.getBlockNumber({ cacheTime: 0 });
  while (to >= first) {
    const from = to - chunk + 1n > first ? to - chunk + 1n : first;
    const logs = await ctx.publicClient.getLogs({
      address: ctx.deployment.settlement,
      event,
      args: { batchId: uuidToBytes32(batchId) },
      fromBlock: from,
      toBlock: to,
    });
    const log = logs.find((l) => !l.removed);
    if (log) return { txHash: log.transactionHash, blockNumber: log.blockNumber, blockHash: log.blockHash, logIndex: log.logIndex };
    to = from - 1n;
  }
  return null;
}

export interface SettledBatchLog extends BatchSettlementLog {
  batchId: string;
}

/** Every BatchSettled log on the canonical chain from `fromBlock` to `toBlock`, oldest first, in chunks. */
export async function settledBatchesBetween(ctx: ChainReadContext, fromBlock: bigint, toBlock: bigint, opts: { chunkSize?: bigint } = {}): Promise<SettledBatchLog[]> {
  const chunk = opts.chunkSize ?? 10_000n;
  const event = getAbiItem({ abi: creditSettlementAbi, name: 'BatchSettled' });
  const out: SettledBatchLog[] = [];
  for (let from = fromBlock; from <= toBlock; from += chunk) {
    const to = from + chunk - 1n < toBlock ? from + chunk - 1n : toBlock;
    const logs = await ctx.publicClient.getLogs({ address: ctx.deployment.settlement, event, fromBlock: from, toBlock: to });
    for (const l of logs) {
      if (l.removed) continue;
      out.push({ batchId: bytes32ToUuid(l.args.batchId!), txHash: l.transactionHash, blockNumber: l.blockNumber, blockHash: l.blockHash, logIndex: l.logIndex });
    }
  }
  return out;
}

export type ConfirmationResult =
  | { status: 'confirmed'; txHash: Hash; blockNumber: bigint; blockHash: Hash; gasUsed: bigint; effectiveGasPrice: bigint; confirmedAt: number }
  | { status: 'reverted'; txHash: Hash; blockNumber: bigint }
  | { status: 'dropped' };

/** Plain JSON (no bigint), so it can go straight into a Temporal heartbeat. */
export interface ConfirmationProgress {
  txHash: Hash;
  state: 'pending' | 'missing' | 'mined';
  confirmations: number;
  head: number;
}

export interface AwaitConfirmationOptions {
  batchId: string;
  txHash: Hash;
  /** Blocks including the receipt's own; 0 is treated as 1. */
  confirmations: number;
  pollMs: number;
  /** Past this the call throws ConfirmationTimeoutError, so the activity retries it. */
  timeoutMs: number;
  /** How long the transaction must stay unknown to the node before it counts as dropped; default min(30 s, timeoutMs / 2). */
  dropAfterMs?: number;
  onProgress?: (progress: ConfirmationProgress) => void | Promise<void>;
  /** Follows a replacement of the transaction (same nonce, higher fee): NonceManager.currentHash. */
  currentHash?: (hash: Hash) => Hash;
}

/**
 * Polls until the batch is settled on the canonical chain with enough confirmations, reverted at that
 * depth, or dropped (its transaction gone; re-submitting the same batchId is safe).
 */
export async function awaitBatchConfirmation(ctx: ChainReadContext, opts: AwaitConfirmationOptions): Promise<ConfirmationResult> {
  const need = BigInt(Math.max(1, opts.confirmations));
  const dropAfterMs = opts.dropAfterMs ?? Math.min(30_000, Math.floor(opts.timeoutMs / 2));
  const deadline = Date.now() + opts.timeoutMs;
  const batchIdHex = uuidToBytes32(opts.batchId).toLowerCase();
  let txHash = opts.txHash;
  let missingSince: number | undefined;

  for (;;) {
    txHash = opts.currentHash?.(txHash) ?? txHash;
    const head = await ctx.publicClient.getBlockNumber({ cacheTime: 0 });
    const receipt = await receiptOrNull(ctx, txHash);
    let progress: ConfirmationProgress;
    if (receipt === null) {
      // Another submission of the same batch may have landed instead of this one.
      const other = (await isBatchSettled(ctx, opts.batchId)) ? await findBatchSettlement(ctx, opts.batchId) : null;
      if (other && other.txHash !== txHash) {
        txHash = other.txHash;
        missingSince = undefined;
        continue;
      }
      const pending = await transactionKnown(ctx, txHash);
      if (pending) missingSince = undefined;
      else {
        missingSince ??= Date.now();
        if (Date.now() - missingSince >= dropAfterMs) return { status: 'dropped' };
      }
      progress = { txHash, state: pending ? 'pending' : 'missing', confirmations: 0, head: Number(head) };
    } else {
      missingSince = undefined;
      const depth = head - receipt.blockNumber + 1n;
      progress = { txHash, state: 'mined', confirmations: Number(depth > 0n ? depth : 0n), head: Number(head) };
      const block = await blockOrNull(ctx, receipt.blockNumber);
      if (block !== null && block.hash === receipt.blockHash) {
        if (receipt.status === 'reverted') {
          if (depth >= need) return { status: 'reverted', txHash, blockNumber: receipt.blockNumber };
        } else if (!emitsBatchSettled(ctx, receipt, batchIdHex)) {
          // A no-op (settled earlier by another transaction): confirm the one that paid.
          const other = await findBatchSettlement(ctx, opts.batchId);
          if (other && other.txHash !== txHash) {
            txHash = other.txHash;
            continue;
          }
        } else if (depth >= need && (await isBatchSettled(ctx, opts.batchId))) {
          return {
            status: 'confirmed',
            txHash,
            blockNumber: receipt.blockNumber,
            blockHash: receipt.blockHash,
            gasUsed: receipt.gasUsed,
            effectiveGasPrice: receipt.effectiveGasPrice ?? 0n,
            confirmedAt: Number(block.timestamp),
          };
        }
      }
    }
    await opts.onProgress?.(progress);
    if (Date.now() >= deadline) {
      throw new ConfirmationTimeoutError(`batch ${opts.batchId} not confirmed within ${opts.timeoutMs} ms (tx ${txHash}, ${progress.state})`);
    }
    await sleep(opts.pollMs);
  }
}

async function receiptOrNull(ctx: ChainReadContext, hash: Hash): Promise<TransactionReceipt | null> {
  try {
    return await ctx.publicClient.getTransactionReceipt({ hash });
  } catch (err) {
    if (err instanceof TransactionReceiptNotFoundError) return null;
    throw err;
  }
}

async function transactionKnown(ctx: ChainReadContext, hash: Hash): Promise<boolean> {
  try {
    await ctx.publicClient.getTransaction({ hash });
    return true;
  } catch (err) {
    if (err instanceof TransactionNotFoundError) return false;
    throw err;
  }
}

async function blockOrNull(ctx: ChainReadContext, blockNumber: bigint) {
  try {
    return await ctx.publicClient.getBlock({ blockNumber });
  } catch (err) {
    if (err instanceof BlockNotFoundError) return null;
    throw err;
  }
}

function settlementLogs(ctx: ChainReadContext, logs: readonly Log[]): Log[] {
  const address = ctx.deployment.settlement.toLowerCase();
  return logs.filter((l) => l.address.toLowerCase() === address);
}

function emitsBatchSettled(ctx: ChainReadContext, receipt: TransactionReceipt, batchIdHex: string): boolean {
  return parseEventLogs({ abi: creditSettlementAbi, eventName: 'BatchSettled', logs: settlementLogs(ctx, receipt.logs) }).some(
    (l) => l.args.batchId.toLowerCase() === batchIdHex,
  );
}

export interface PaymentSettledEvent {
  paymentId: string;
  borrowerId: string;
  merchantId: string;
  amount: bigint;
  logIndex: number;
}

export async function readPaymentSettledEvents(ctx: ChainReadContext, txHash: Hash): Promise<PaymentSettledEvent[]> {
  const receipt = await ctx.publicClient.getTransactionReceipt({ hash: txHash });
  return parseEventLogs({ abi: creditSettlementAbi, eventName: 'PaymentSettled', logs: settlementLogs(ctx, receipt.logs) }).map((l) => ({
    paymentId: bytes32ToUuid(l.args.paymentId),
    borrowerId: bytes32ToUuid(l.args.borrowerId),
    merchantId: bytes32ToUuid(l.args.merchantId),
    amount: l.args.amount,
    logIndex: l.logIndex,
  }));
}

export async function debtOf(ctx: ChainReadContext, borrowerId: string): Promise<bigint> {
  return readById(ctx, 'debtOf', borrowerId);
}

export async function assetBalanceOf(ctx: ChainReadContext, address: `0x${string}`): Promise<bigint> {
  return ctx.publicClient.readContract({ address: ctx.deployment.asset, abi: testUsdcAbi, functionName: 'balanceOf', args: [address] });
}
