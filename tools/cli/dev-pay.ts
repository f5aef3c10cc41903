import { decodePaymentResponseHeader } from '@x402/core/http';
import { findPaymentByVoucher } from '../../src/store/payments.js';
import { settlementTarget, type CliContext } from './context.js';
import { devBorrowerCreate, devVoucher, requireDevTools } from './dev-commands.js';
import { UsageError } from './output.js';
import { creditOffer } from './payment-required.js';
import { watchPayment } from './payment-watch.js';

export interface DevPayOptions {
  url?: string;
  borrower?: string;
  agent?: string;
  agentPrivateKey?: string;
  apiKey?: string;
  /** Long-poll the payment until it is final, up to this many seconds. */
  waitSeconds?: number;
}

const MAX_BODY_CHARS = 2000;

/**
 * Dev only: a test payment in one command. Fetches the URL, reads its 402, reserves credit for the
 * merchant's credit requirement and signs a voucher that carries that requirement as-is (a dev
 * borrower is made on the fly unless one is given), then sends the request again with
 * PAYMENT-SIGNATURE and reports the merchant's answer and the payment's status.
 */
export async function devPay(ctx: CliContext, opts: DevPayOptions) {
  requireDevTools(ctx);
  if (!opts.url || !/^https?:\/\//.test(opts.url)) throw new UsageError('the URL to pay is required: dev pay <http(s) URL>');
  const url = opts.url;
  const given = [opts.borrower, opts.agent, opts.agentPrivateKey].filter(Boolean).length;
  if (given !== 0 && given !== 3) throw new UsageError('--borrower, --agent and --agent-private-key go together (or pass none: a dev borrower is made)');
  const { network } = settlementTarget(ctx);

  const unpaid = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const unpaidBody = await unpaid.text();
  if (unpaid.status !== 402) throw new UsageError(`${url} answered ${unpaid.status}, not 402 Payment Required: nothing to pay`);
  const offer = creditOffer(unpaid.headers.get('payment-required'), unpaidBody, network);

  const borrower = given === 3
    ? { borrowerId: opts.borrower as string, operationalAgentId: opts.agent as string, agentPrivateKey: opts.agentPrivateKey as string, created: false }
    : { ...(await devBorrowerCreate(ctx, { credit: String(Math.max(1_000_000_000, Number(offer.accepted.amount))) })), created: true };
  const voucher = await devVoucher(ctx, {
    borrower: borrower.borrowerId,
    agent: borrower.operationalAgentId,
    agentPrivateKey: borrower.agentPrivateKey as string,
    accepted: offer.accepted,
    resource: offer.resource ?? url,
  });

  const paid = await fetch(url, {
    headers: { 'payment-signature': voucher.paymentSignatureHeader, 'idempotency-key': voucher.idempotencyKey },
    signal: AbortSignal.timeout(180_000),
  });
  const text = await paid.text();
  const settle = paymentResponse(paid.headers.get('payment-response'));
  const merchantId = String(offer.accepted.extra?.merchantId ?? '');
  const paymentId = settleExtra(settle, 'paymentId') ?? (await findPaymentByVoucher(ctx.store.c, voucher.voucherId))?._id;
  const watched = paymentId ? await watchPayment(ctx, merchantId, paymentId, { ...(opts.apiKey ? { apiKey: opts.apiKey } : {}), ...(opts.waitSeconds ? { waitSeconds: opts.waitSeconds } : {}) }) : null;

  const ok = paid.status >= 200 && paid.status < 300 && (!opts.waitSeconds || watched?.status === 'CONFIRMED');
  if (!ok) process.exitCode = 1;
  return {
    url,
    merchantId,
    amount: offer.accepted.amount,
    orderRef: voucher.orderRef,
    ...(borrower.created ? { borrowerId: borrower.borrowerId, borrowerCreated: true } : { borrowerId: borrower.borrowerId }),
    merchantStatus: paid.status,
    ...(settle ? { paymentResponse: settle } : {}),
    merchantBody: bodyOf(text),
    paymentId: paymentId ?? null,
    paymentStatus: watched?.status ?? (paymentId ? 'UNKNOWN' : 'NOT_CAPTURED'),
    ...(watched?.receipt?.batchId ? { batchId: watched.receipt.batchId } : {}),
    ...(watched?.receipt?.transaction ? { transaction: watched.receipt.transaction } : {}),
    ...(watched?.note ? { note: watched.note } : {}),
  };
}

function paymentResponse(header: string | null): Record<string, unknown> | undefined {
  if (!header) return undefined;
  try {
    return decodePaymentResponseHeader(header) as unknown as Record<string, unknown>;
  } catch {
    return { unreadable: header.slice(0, 200) };
  }
}

function settleExtra(settle: Record<string, unknown> | undefined, key: string): string | undefined {
  const extra = settle?.extra as Record<string, unknown> | undefined;
  return typeof extra?.[key] === 'string' ? (extra[key] as string) : undefined;
}

function bodyOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text.length > MAX_BODY_CHARS ? `${text.slice(0, MAX_BODY_CHARS)}…` : text;
  }
}
