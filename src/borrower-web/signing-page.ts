import { WALLET_HELPERS } from './client-script.js';
import { jsonForScript, page } from '../http/html.js';

/** The page a signing link opens: shows the request, then the borrower's wallet signs it. */
export function signingPage(signingRequestId: string, chainId: number, nonce: string): string {
  const body = `
<h1>Signature requested</h1>
<p id="summary">Loading the request…</p>
<dl>
  <dt>Kind</dt><dd id="kind">—</dd>
  <dt>Status</dt><dd id="state">—</dd>
  <dt>Wallet</dt><dd id="wallet" class="mono">—</dd>
  <dt>Expires</dt><dd id="expires">—</dd>
</dl>
<details><summary>Exact message your wallet will sign</summary><pre id="typed-data" class="mono" style="white-space:pre-wrap"></pre></details>
<p class="muted">Only sign if you started this from your agent. Never enter a seed phrase or private key on any page.</p>
<button id="sign" type="button" disabled>Connect wallet and sign</button>
<p id="status" class="status" role="status" aria-live="polite"></p>`;
  const source = `${WALLET_HELPERS}
const cfg = ${jsonForScript({ api: `/borrower/api/signing-requests/${encodeURIComponent(signingRequestId)}`, chainId })};
let request = null;
// The view may speak the store's status (PENDING) or the tool's (signature_required).
function isOpen(r) { const s = String(r.status).toUpperCase(); return s === 'PENDING' || s === 'SIGNATURE_REQUIRED'; }
function render(r) {
  request = r;
  $('summary').textContent = r.summary;
  $('kind').textContent = r.kind;
  $('state').textContent = r.status;
  $('wallet').textContent = r.wallet;
  $('expires').textContent = new Date(r.expires_at).toLocaleString();
  $('typed-data').textContent = JSON.stringify(r.typed_data, null, 2);
  const s = String(r.status).toUpperCase();
  $('sign').disabled = !isOpen(r);
  if (s === 'COMPLETED') showStatus('Done. You can close this page and return to your agent.', 'ok');
  else if (s === 'SIGNED' || s === 'PROCESSING') showStatus('Signed; processing…', 'ok');
  else if (s === 'FAILED') showStatus('This request failed' + (r.failure_reason ? ': ' + r.failure_reason : '.'), 'error');
  else if (s === 'EXPIRED') showStatus('This signing link expired. Ask your agent for a new one.', 'error');
}
async function load() {
  try { render(await callJson(cfg.api)); } catch (e) { showStatus(e.message, 'error'); }
}
$('sign').addEventListener('click', async () => {
  if (!request) return;
  $('sign').disabled = true;
  try {
    const account = await connectWallet();
    if (account !== String(request.wallet).toLowerCase()) {
      throw new Error('Your wallet is connected as ' + account + ', but this request must be signed by ' + request.wallet + '. Switch accounts and try again.');
    }
    await ensureChain(cfg.chainId);
    showStatus('Approve the signature in your wallet…');
    const signature = await signTypedData(account, request.typed_data);
    showStatus('Submitting the signature…');
    const done = await callJson(cfg.api + '/signature', { signature });
    await load();
    if (String(done.status).toUpperCase() === 'COMPLETED') showStatus('Done. You can close this page and return to your agent.', 'ok');
  } catch (e) {
    showStatus(walletError(e), 'error');
    $('sign').disabled = !(request && isOpen(request));
  }
});
load();
`;
  return page('Signature requested — x402 credit facilitator', body, { nonce, source });
}
