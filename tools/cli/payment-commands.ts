import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, getAddress, http, type Address } from 'viem';
import { isUuid } from '@credit-facilitator/wire/ids';
import { reconcile, reconcileRefunds } from '../../src/domain/reconcile.js';
import { chainRefundsFor, chainSettlementsBetween, settledPaymentsBetween, storeRefundsOf, storeSettlements, toCsv } from '../../src/payments/settlement-report.js';
import { findMerchant } from '../../src/store/merchants.js';
import type { CliContext } from './context.js';
import { UsageError } from './output.js';
import { userPath } from './user-path.js';

export interface PeriodFlags {
  merchant?: string;
  from?: string;
  to?: string;
}

async function period(ctx: CliContext, f: PeriodFlags) {
  if (!f.merchant || !isUuid(f.merchant)) throw new UsageError('--merchant <merchantId> is required');
  const merchantId = f.merchant.toLowerCase();
  if (!(await findMerchant(ctx.store.c, merchantId))) throw new UsageError(`no merchant ${merchantId}: list them with "merchant list"`);
  const from = new Date(f.from ?? '');
  const to = f.to ? new Date(f.to) : new Date();
  if (!f.from || Number.isNaN(from.getTime())) throw new UsageError('--from <ISO 8601 time> is required (settlement block time, inclusive)');
  if (Number.isNaN(to.getTime()) || to <= from) throw new UsageError('--to must be an ISO 8601 time after --from (exclusive; default now)');
  return { merchantId, from, to };
}

const readDeps = (ctx: CliContext) => ({ store: ctx.store, env: ctx.env, nowMs: Date.now });

/** The merchant's payments settled in the period, to a CSV or JSON file (or stdout). */
export async function paymentsExport(ctx: CliContext, f: PeriodFlags & { format?: string; out?: string }) {
  const { merchantId, from, to } = await period(ctx, f);
  const format = f.format ?? 'csv';
  if (format !== 'csv' && format !== 'json') throw new UsageError('--format is csv or json');
  const rows = await settledPaymentsBetween(readDeps(ctx), merchantId, from, to);
  const text = format === 'csv' ? toCsv(rows) : JSON.stringify(rows, null, 2) + '\n';
  const out = f.out ? userPath(f.out) : undefined;
  if (out) writeFileSync(out, text);
  else process.stdout.write(text);
  const amount = rows.reduce((s, r) => s + BigInt(r.amount), 0n).toString();
  return { merchantId, from: from.toISOString(), to: to.toISOString(), payments: rows.length, amount, ...(out ? { file: out } : {}) };
}

function chainSettings(ctx: CliContext, rpcFlag?: string): { rpcUrl: string; contract: Address; fromBlock: bigint } {
  const rpcUrl = rpcFlag ?? ctx.env.RPC_URL ?? `http://127.0.0.1:${ctx.env.ANVIL_PORT}`;
  if (ctx.env.SETTLEMENT_CONTRACT_ADDRESS) return { rpcUrl, contract: getAddress(ctx.env.SETTLEMENT_CONTRACT_ADDRESS), fromBlock: BigInt(ctx.env.DEPLOY_BLOCK) };
  const file = join(ctx.dataDir, 'deployment.json');
  if (!existsSync(file)) throw new UsageError(`no SETTLEMENT_CONTRACT_ADDRESS and no ${file}: set it, or run against the stack npm start brought up`);
  const d = JSON.parse(readFileSync(file, 'utf8')) as { settlement: string; deployBlock: string };
  return { rpcUrl, contract: getAddress(d.settlement), fromBlock: BigInt(d.deployBlock) };
}

/** Every difference between the store's CONFIRMED payments and refunds and the chain's PaymentSettled and Refunded events for the period. */
export async function paymentsReconcile(ctx: CliContext, f: PeriodFlags & { rpcUrl?: string }) {
  const { merchantId, from, to } = await period(ctx, f);
  const chain = chainSettings(ctx, f.rpcUrl);
  const client = createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 3, timeout: 20_000 }) });
  const [rows, events] = await Promise.all([
    settledPaymentsBetween(readDeps(ctx), merchantId, from, to),
    chainSettlementsBetween(client, chain.contract, merchantId, chain.fromBlock, from, to),
  ]);
  const paymentIds = [...new Set([...rows.map((r) => r.paymentId), ...events.map((e) => e.paymentId)])];
  const [storeRefunds, chainRefunds] = await Promise.all([
    storeRefundsOf(ctx.store.c, paymentIds),
    chainRefundsFor(client, chain.contract, merchantId, chain.fromBlock, paymentIds),
  ]);
  const differences = [...reconcile(storeSettlements(rows), events), ...reconcileRefunds(storeRefunds, chainRefunds)];
  return {
    merchantId,
    from: from.toISOString(),
    to: to.toISOString(),
    storeConfirmed: rows.length,
    chainSettled: events.length,
    storeRefunds: storeRefunds.length,
    chainRefunds: chainRefunds.length,
    differences,
  };
}
