import { randomUUID } from 'node:crypto';
import { PERMISSIONS } from '../auth/permissions.js';
import type { Receipt } from '../domain/payment.js';
import { escapeHtml } from '../http/html.js';
import type { ConsoleCaller } from './console-auth.js';
import { explorerTxUrl } from './explorer.js';
import { consolePage, csrfField, link, time } from './layout.js';

function step(id: string, done: boolean, title: string, detail: string): string {
  return `<li id="${id}" class="${done ? 'done' : 'pending'}"><strong>${escapeHtml(title)}</strong> ${detail}</li>`;
}

/** Captured, then the batch that claimed it, its transaction, and CONFIRMED (or how it ended otherwise). */
export function timeline(p: Receipt, chainId: number): string {
  const tx = p.transaction;
  const explorer = tx ? explorerTxUrl(chainId, tx) : null;
  const txDetail = tx
    ? `<span class="mono" id="transaction">${escapeHtml(tx)}</span>${explorer ? ` <a id="explorer-link" href="${escapeHtml(explorer)}" rel="noreferrer noopener" target="_blank">view on the explorer</a>` : ''}${p.blockNumber ? ` · block ${escapeHtml(p.blockNumber)}` : ''}`
    : '<span class="muted">not sent yet</span>';
  const steps = [
    step('step-captured', true, 'Captured', time(p.capturedAt)),
    step('step-batch', !!p.batchId, 'Batch', p.batchId ? link(`/merchant/batches/${p.batchId}`, p.batchId, 'mono') : '<span class="muted">waiting for a batch</span>'),
    step('step-transaction', !!tx, 'Transaction', txDetail),
  ];
  if (p.status === 'FAILED') steps.push(step('step-failed', true, 'FAILED', escapeHtml(p.failureReason ?? '')));
  else if (p.status === 'VOIDED') steps.push(step('step-voided', true, 'VOIDED', time(p.voidedAt)));
  else steps.push(step('step-confirmed', p.status === 'CONFIRMED', 'CONFIRMED', p.confirmedAt ? time(p.confirmedAt) : '<span class="muted">not yet</span>'));
  return `<ol class="timeline" id="timeline">${steps.join('')}</ol>`;
}

function refunds(p: Receipt, chainId: number): string {
  if (!p.refunds?.length) return '';
  const rows = p.refunds
    .map((r) => {
      const url = r.transaction ? explorerTxUrl(chainId, r.transaction) : null;
      const tx = r.transaction ? (url ? `<a href="${escapeHtml(url)}" rel="noreferrer noopener" target="_blank" class="mono">${escapeHtml(r.transaction.slice(0, 12))}…</a>` : `<span class="mono">${escapeHtml(r.transaction)}</span>`) : '—';
      return `<tr class="refund" data-refund-id="${escapeHtml(r.refundId)}"><td class="mono">${escapeHtml(r.refundId)}</td><td class="amount">${escapeHtml(r.amount)}</td><td class="status">${escapeHtml(r.status)}</td><td>${time(r.createdAt)}</td><td>${tx}</td></tr>`;
    })
    .join('');
  return `<h2>Refunds</h2><p>Refunded so far: <span id="amount-refunded">${escapeHtml(p.amountRefunded ?? '0')}</span></p>
<table id="refunds"><thead><tr><th>Refund</th><th>Amount</th><th>Status</th><th>Asked</th><th>Transaction</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function actions(caller: ConsoleCaller, p: Receipt): string {
  const p2 = caller.principal;
  const canAct = p2.permissions.includes(PERMISSIONS.settleCreate);
  const note = !canAct
    ? '<p class="muted" id="no-write-permission">Your user has no x402:settle:create permission: it cannot void or refund.</p>'
    : !p2.steppedUp
      ? '<p class="notice" id="step-up-note">Voids and refunds need a multi-factor sign-in from the last 10 minutes. <a href="/merchant/sign-in?step_up=1">Step up</a>.</p>'
      : '';
  const base = `/merchant/payments/${encodeURIComponent(p.paymentId)}`;
  if (p.status === 'QUEUED') {
    return `<h2>Cancel</h2>${note}<p>No batch has claimed this payment yet: voiding it releases the borrower's credit. A batch may claim it first.</p>
<form method="post" action="${base}/void" id="void-form">${csrfField(caller)}<input type="hidden" name="idempotencyKey" value="${randomUUID()}"><button type="submit" id="void">Void payment</button></form>`;
  }
  if (p.status === 'CONFIRMED') {
    return `<h2>Refund</h2>${note}<p>Your payout wallet signs the refund; we redeem it on-chain and lower the borrower's debt by the amount.</p>
<form method="get" action="${base}/refund" id="refund-form">
<label><input type="radio" name="kind" value="full" checked> all that is left</label>
<label><input type="radio" name="kind" value="partial" id="refund-partial"> part: <input name="amount" id="refund-amount" inputmode="numeric" placeholder="base units" aria-label="Refund amount"></label>
<button type="submit" id="refund-start">Prepare refund</button></form>`;
  }
  return '';
}

export function paymentPage(caller: ConsoleCaller, p: Receipt, chainId: number): string {
  return consolePage(
    `Payment ${p.paymentId}`,
    `<h1>Payment <span class="mono">${escapeHtml(p.paymentId)}</span></h1>
<dl id="payment">
<dt>Status</dt><dd id="payment-status">${escapeHtml(p.status)}</dd>
<dt>Order</dt><dd id="order-ref">${escapeHtml(p.orderRef)}</dd>
<dt>Amount</dt><dd>${escapeHtml(p.amount)} <span class="muted">base units of <span class="mono">${escapeHtml(p.asset)}</span> on ${escapeHtml(p.network)}</span></dd>
<dt>Payer</dt><dd class="mono">${escapeHtml(p.payer)}</dd>
</dl>
<h2>Timeline</h2>
${timeline(p, chainId)}
${refunds(p, chainId)}
${actions(caller, p)}`,
    caller,
  );
}
