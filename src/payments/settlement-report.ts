import { parseAbiItem, type Address, type PublicClient } from 'viem';
import { bytes32ToUuid, uuidToBytes32 } from '@credit-facilitator/wire/ids';
import type { ChainSettlement, RefundFact, StoreSettlement } from '../domain/reconcile.js';
import type { Collections } from '../store/collections.js';
import { findRefundsOf } from '../store/refunds.js';
import { listPayments } from './list-payments.js';
import type { StatusDeps } from './status.js';

/** A payment settled to the merchant, as the export writes it. */
export interface SettledRow {
  paymentId: string;
  orderRef: string;
  payer: string;
  amount: string;
  asset: string;
  network: string;
  capturedAt: string;
  confirmedAt: string;
  batchId: string;
  transaction: string;
  blockNumber: string;
  /** The sum of the payment's SUCCEEDED refunds (0 when none). */
  amountRefunded: string;
}

/** How long before a period a payment it settled may have been captured (the list is by capture time). */
const CAPTURE_LOOKBACK_MS = 24 * 3600_000;

/**
 * The merchant's payments CONFIRMED by a block whose time is in [from, to), oldest first, read
 * from the ledger through the same pages the list route serves.
 */
export async function settledPaymentsBetween(deps: StatusDeps, merchantId: string, from: Date, to: Date): Promise<SettledRow[]> {
  const rows: SettledRow[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const page = await listPayments(deps, merchantId, {
      limit: 100,
      status: 'CONFIRMED',
      createdFrom: new Date(from.getTime() - CAPTURE_LOOKBACK_MS).toISOString(),
      createdBefore: to.toISOString(),
      ...(startingAfter ? { startingAfter } : {}),
    });
    for (const r of page.data) {
      const at = r.confirmedAt ? new Date(r.confirmedAt).getTime() : NaN;
      if (!(at >= from.getTime() && at < to.getTime())) continue;
      rows.push({
        paymentId: r.paymentId,
        orderRef: r.orderRef,
        payer: r.payer,
        amount: r.amount,
        asset: r.asset,
        network: r.network,
        capturedAt: r.capturedAt,
        confirmedAt: r.confirmedAt!,
        batchId: r.batchId ?? '',
        transaction: r.transaction ?? '',
        blockNumber: r.blockNumber ?? '',
        amountRefunded: '0',
      });
    }
    if (!page.has_more) break;
    startingAfter = page.data.at(-1)!.paymentId;
  }
  const refunds = await storeRefundsOf(deps.store.c, rows.map((r) => r.paymentId));
  for (const r of rows) r.amountRefunded = refunds.filter((f) => f.paymentId === r.paymentId).reduce((s, f) => s + BigInt(f.amount), 0n).toString();
  return rows.sort((a, b) => a.confirmedAt.localeCompare(b.confirmedAt) || a.paymentId.localeCompare(b.paymentId));
}

/** The SUCCEEDED refunds of these payments, as the store recorded them. */
export async function storeRefundsOf(c: Collections, paymentIds: readonly string[]): Promise<RefundFact[]> {
  const out: RefundFact[] = [];
  for (let i = 0; i < paymentIds.length; i += 100) {
    const docs = await findRefundsOf(c, paymentIds.slice(i, i + 100));
    for (const d of docs) {
      for (const r of d.refunds) {
        if (r.status === 'SUCCEEDED') out.push({ paymentId: d._id, nonce: r.authorization.nonce, amount: r.amount, transaction: r.transaction ?? '' });
      }
    }
  }
  return out;
}

const refunded = parseAbiItem(
  'event Refunded(bytes32 indexed paymentId, bytes32 indexed borrowerId, bytes32 indexed merchantId, address from, bytes32 nonce, uint256 amount, uint256 debtReduced)',
);

/** The contract's Refunded events for the merchant's payments among `paymentIds`. */
export async function chainRefundsFor(client: PublicClient, contract: Address, merchantId: string, fromBlock: bigint, paymentIds: readonly string[]): Promise<RefundFact[]> {
  const wanted = new Set(paymentIds);
  const logs = await client.getLogs({ address: contract, event: refunded, args: { merchantId: uuidToBytes32(merchantId) as `0x${string}` }, fromBlock, toBlock: 'latest' });
  return logs
    .map((l) => ({ paymentId: bytes32ToUuid(l.args.paymentId!), nonce: l.args.nonce!, amount: String(l.args.amount), transaction: l.transactionHash }))
    .filter((f) => wanted.has(f.paymentId));
}

const paymentSettled = parseAbiItem('event PaymentSettled(bytes32 indexed paymentId, bytes32 indexed borrowerId, bytes32 indexed merchantId, uint256 amount)');

/** The contract's PaymentSettled events for the merchant in blocks whose time is in [from, to). */
export async function chainSettlementsBetween(
  client: PublicClient,
  contract: Address,
  merchantId: string,
  fromBlock: bigint,
  from: Date,
  to: Date,
): Promise<ChainSettlement[]> {
  const logs = await client.getLogs({ address: contract, event: paymentSettled, args: { merchantId: uuidToBytes32(merchantId) as `0x${string}` }, fromBlock, toBlock: 'latest' });
  const times = new Map<bigint, number>();
  for (const n of new Set(logs.map((l) => l.blockNumber))) times.set(n, Number((await client.getBlock({ blockNumber: n })).timestamp) * 1000);
  return logs
    .filter((l) => {
      const t = times.get(l.blockNumber)!;
      return t >= from.getTime() && t < to.getTime();
    })
    .map((l) => ({ paymentId: bytes32ToUuid(l.args.paymentId!), amount: String(l.args.amount), transaction: l.transactionHash, blockNumber: String(l.blockNumber) }));
}

export function storeSettlements(rows: readonly SettledRow[]): StoreSettlement[] {
  return rows.map((r) => ({ paymentId: r.paymentId, amount: r.amount, transaction: r.transaction, blockNumber: r.blockNumber }));
}

const CSV_COLUMNS: (keyof SettledRow)[] = ['paymentId', 'orderRef', 'payer', 'amount', 'asset', 'network', 'capturedAt', 'confirmedAt', 'batchId', 'transaction', 'blockNumber', 'amountRefunded'];

/** RFC 4180: every field quoted, quotes doubled, CRLF line ends. */
export function toCsv(rows: readonly SettledRow[]): string {
  const q = (v: string) => `"${v.replace(/"/g, '""')}"`;
  return [CSV_COLUMNS.map(q).join(','), ...rows.map((r) => CSV_COLUMNS.map((c) => q(r[c])).join(','))].join('\r\n') + '\r\n';
}
