import { randomUUID } from 'node:crypto';
import { escapeHtml, jsonForScript } from '../http/html.js';
import { WALLET_HELPERS } from '../http/wallet-script.js';
import type { ConsoleCaller } from './console-auth.js';
import { consolePage, csrfField } from './layout.js';

export interface RefundView {
  paymentId: string;
  amount: string;
  refundable: string;
  payoutAddress: string;
  chainId: number;
  /** The EIP-712 ReceiveWithAuthorization the payout wallet signs (prepareRefundAuthorization). */
  typedData: { message: Record<string, unknown> } & Record<string, unknown>;
}

/**
 * The refund's last step: the payout wallet (EIP-1193, in this browser) signs the typed data, and
 * the form posts the signature with the session's CSRF token. The form's idempotency key makes a
 * second press replay the first refund instead of asking twice.
 */
export function refundPage(caller: ConsoleCaller, v: RefundView, nonce: string): string {
  const body = `<h1>Refund <span id="refund-amount-shown">${escapeHtml(v.amount)}</span> of payment <span class="mono">${escapeHtml(v.paymentId)}</span></h1>
<p>Left to refund before this one: ${escapeHtml(v.refundable)} base units. The payout wallet <span class="mono">${escapeHtml(v.payoutAddress)}</span> signs an authorization that moves ${escapeHtml(v.amount)} base units back to the credit pool; nothing moves until you submit.</p>
<form method="post" action="/merchant/payments/${escapeHtml(encodeURIComponent(v.paymentId))}/refunds" id="refund-submit-form">
${csrfField(caller)}
<input type="hidden" name="idempotencyKey" value="${randomUUID()}">
<input type="hidden" name="amount" value="${escapeHtml(v.amount)}">
<input type="hidden" name="authorization" value="${escapeHtml(JSON.stringify(v.typedData.message))}">
<input type="hidden" name="signature" id="signature" value="">
<button type="button" id="sign-refund">Sign with the payout wallet and refund</button>
</form>
<p id="status" class="status" role="status" aria-live="polite"></p>`;
  const source = `${WALLET_HELPERS}
const cfg = ${jsonForScript({ chainId: v.chainId, typedData: v.typedData })};
$('sign-refund').addEventListener('click', async () => {
  $('sign-refund').disabled = true;
  try {
    showStatus('Waiting for your wallet…');
    const account = await connectWallet();
    await ensureChain(cfg.chainId);
    showStatus('Approve the refund authorization in your wallet…');
    $('signature').value = await signTypedData(account, cfg.typedData);
    showStatus('Submitting…');
    $('refund-submit-form').submit();
  } catch (e) {
    showStatus(walletError(e), 'error');
    $('sign-refund').disabled = false;
  }
});
`;
  return consolePage(`Refund ${v.paymentId}`, body, caller, { nonce, source });
}
