import { PAYMENT_STATUSES } from '@credit-facilitator/wire/payment-status';
import type { Receipt } from '../domain/payment.js';
import { escapeHtml } from '../http/html.js';
import type { ConsoleCaller } from './console-auth.js';
import { consolePage, href, link, time } from './layout.js';

export interface PaymentSearch {
  orderRef?: string;
  status?: string;
  from?: string;
  to?: string;
}

export function paymentRows(payments: readonly Receipt[]): string {
  if (payments.length === 0) return '<p class="muted" id="no-payments">No payments match.</p>';
  const rows = payments
    .map(
      (p) => `<tr class="payment" data-payment-id="${escapeHtml(p.paymentId)}">
<td>${link(`/merchant/payments/${p.paymentId}`, p.paymentId, 'mono')}</td><td>${escapeHtml(p.orderRef)}</td><td class="amount">${escapeHtml(p.amount)}</td>
<td class="status">${escapeHtml(p.status)}</td><td>${time(p.capturedAt)}</td><td>${p.batchId ? link(`/merchant/batches/${p.batchId}`, p.batchId.slice(0, 8) + '…', 'mono') : '—'}</td></tr>`,
    )
    .join('');
  return `<table id="payments"><thead><tr><th>Payment</th><th>Order</th><th>Amount</th><th>Status</th><th>Captured</th><th>Batch</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Find payments: by order reference, payment id, status and capture dates; newest first, a page at a time. */
export function paymentsPage(caller: ConsoleCaller, search: PaymentSearch, payments: readonly Receipt[], nextPage: string | null): string {
  const statusOptions = ['', ...PAYMENT_STATUSES].map((s) => `<option value="${s}"${search.status === s ? ' selected' : ''}>${s || 'any status'}</option>`).join('');
  const exportFrom = search.from ?? new Date(Date.now() - 30 * 86400_000).toISOString().slice(0, 10);
  return consolePage(
    'Payments',
    `<h1>Payments</h1>
<form method="get" action="/merchant/payments" id="search">
<input name="orderRef" placeholder="order reference" value="${escapeHtml(search.orderRef ?? '')}" aria-label="Order reference">
<input name="paymentId" placeholder="payment id" aria-label="Payment id" size="38">
<select name="status" aria-label="Status">${statusOptions}</select>
<label>from <input type="date" name="from" value="${escapeHtml(search.from ?? '')}"></label>
<label>to <input type="date" name="to" value="${escapeHtml(search.to ?? '')}"></label>
<button type="submit">Find</button>
</form>
${paymentRows(payments)}
${nextPage ? `<p>${link(nextPage, 'Older payments →', 'next-page')}</p>` : ''}
<p class="muted">Dates are UTC days of capture, both included. ${link(href('/merchant/export.csv', { from: exportFrom, ...(search.to ? { to: search.to } : {}) }), 'Export settled payments as CSV', 'export-csv')} (by confirmation day; the same file as <code>admin payments export</code>).</p>`,
    caller,
  );
}
