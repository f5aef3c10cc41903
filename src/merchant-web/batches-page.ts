import type { BatchViewAnswer } from '../payments/batch-view.js';
import { escapeHtml } from '../http/html.js';
import type { ConsoleCaller } from './console-auth.js';
import { explorerTxUrl } from './explorer.js';
import { consolePage, link, time } from './layout.js';
import { paymentRows } from './payments-page.js';

export interface BatchSummary {
  batchId: string;
  payments: number;
  amount: string;
  latestCapture: string;
  status: string;
}

/** The batches that settled (or are settling) the merchant's recent payments, newest first. */
export function batchesPage(caller: ConsoleCaller, batches: readonly BatchSummary[]): string {
  const rows = batches
    .map(
      (b) =>
        `<tr class="batch" data-batch-id="${escapeHtml(b.batchId)}"><td>${link(`/merchant/batches/${b.batchId}`, b.batchId, 'mono')}</td><td>${escapeHtml(b.status)}</td><td>${b.payments}</td><td>${escapeHtml(b.amount)}</td><td>${time(b.latestCapture)}</td></tr>`,
    )
    .join('');
  return consolePage(
    'Batches',
    `<h1>Batches</h1>
<p class="muted">The settlement batches of your latest payments (a batch carries other merchants' payments too; you see only yours).</p>
${batches.length ? `<table id="batches"><thead><tr><th>Batch</th><th>Your payments' status</th><th>Your payments</th><th>Amount</th><th>Latest capture</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">No batch has claimed a payment of yours yet.</p>'}`,
    caller,
  );
}

export function batchPage(caller: ConsoleCaller, b: BatchViewAnswer, chainId: number): string {
  const explorer = b.transaction ? explorerTxUrl(chainId, b.transaction) : null;
  return consolePage(
    `Batch ${b.batchId}`,
    `<h1>Batch <span class="mono">${escapeHtml(b.batchId)}</span></h1>
<dl id="batch">
<dt>Status</dt><dd id="batch-status">${escapeHtml(b.status)}</dd>
<dt>Transaction</dt><dd>${b.transaction ? `<span class="mono">${escapeHtml(b.transaction)}</span>${explorer ? ` <a href="${escapeHtml(explorer)}" rel="noreferrer noopener" target="_blank">explorer</a>` : ''}` : '—'}</dd>
<dt>Block</dt><dd>${escapeHtml(b.blockNumber ?? '—')}</dd>
<dt>Confirmed</dt><dd>${time(b.confirmedAt)}</dd>
${b.failureReason ? `<dt>Failure</dt><dd>${escapeHtml(b.failureReason)}</dd>` : ''}
<dt>Your payments</dt><dd>${b.count}, ${escapeHtml(b.amount)} base units</dd>
</dl>
${paymentRows(b.payments)}`,
    caller,
  );
}
