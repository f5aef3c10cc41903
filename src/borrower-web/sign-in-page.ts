import type { Scope } from '@credit-facilitator/wire/onboarding';
import { WALLET_HELPERS } from './client-script.js';
import { escapeHtml, jsonForScript, page } from '../http/html.js';

/** What each scope lets the agent do, in the borrower's words. */
const SCOPE_TEXT: Readonly<Record<Scope, string>> = {
  'borrower:token': 'see your borrower status and start onboarding',
  'credit:facility:accept': 'ask you to accept the credit facility',
  'agent:key:register': 'register and rotate its agent signing keys (you sign each grant)',
  'handle:claim': 'claim your handle',
  'spend:intent:create': 'prepare payments to merchants within your agent key limits',
  'policy:evaluate': 'check payments against your spending policy',
  'signing:request': 'ask for signatures on payment vouchers',
  'repayment:execute': 'ask you to sign repayments of your credit',
};

export interface SignInView {
  uid: string;
  clientName: string;
  clientId: string;
  /** The host of the client's metadata document (CIMD), which vouches for it; absent for a client registered here (DCR). */
  documentHost?: string;
  redirectHost: string;
  scopes: Scope[];
  chainId: number;
}

/** Who asks: a metadata-document client under the host that publishes it, else a self-registered name. */
function clientLine(v: SignInView): string {
  const name = `<strong id="client-name">${escapeHtml(v.clientName)}</strong>`;
  if (v.documentHost !== undefined) {
    return `<p>${name} from <strong id="client-host" class="mono">${escapeHtml(v.documentHost)}</strong> wants to act for you on the x402 credit facilitator.</p>
<p class="muted" id="client-origin">Its name and redirect addresses are published by ${escapeHtml(v.documentHost)}. Continue only if you trust that site.</p>`;
  }
  return `<p>${name} wants to act for you on the x402 credit facilitator.</p>
<p class="muted" id="client-origin">This agent registered itself here; its name is not verified.</p>`;
}

export function signInPage(v: SignInView, nonce: string): string {
  const scopes = v.scopes.length
    ? `<ul>${v.scopes.map((s) => `<li><code>${escapeHtml(s)}</code> — ${escapeHtml(SCOPE_TEXT[s])}</li>`).join('')}</ul>`
    : '<p class="error">The agent requested no scope this service offers.</p>';
  const body = `
<h1>Sign in with your wallet</h1>
${clientLine(v)}
<p class="muted">Client <span class="mono">${escapeHtml(v.clientId)}</span>, returning to <span class="mono">${escapeHtml(v.redirectHost)}</span>.</p>
<p>It asks permission to:</p>
${scopes}
<p class="muted">Permissions unlock step by step as you finish onboarding. Signing in moves no funds: your wallet signs a message proving you control it. Never enter a seed phrase or private key on any page.</p>
<p>Wallet: <span id="wallet" class="mono">not connected</span></p>
<button id="connect" type="button">Connect wallet</button>
<button id="sign" type="button" disabled>Sign in</button>
<button id="cancel" type="button">Cancel</button>
<p id="status" class="status" role="status" aria-live="polite"></p>`;
  const base = `/oauth/interaction/${encodeURIComponent(v.uid)}`;
  const source = `${WALLET_HELPERS}
const cfg = ${jsonForScript({ base, chainId: v.chainId })};
let account = null;
$('connect').addEventListener('click', async () => {
  try {
    showStatus('Waiting for your wallet…');
    account = await connectWallet();
    $('wallet').textContent = account;
    $('sign').disabled = false;
    showStatus('Connected. Press "Sign in" and approve the message in your wallet.');
  } catch (e) { showStatus(walletError(e), 'error'); }
});
$('sign').addEventListener('click', async () => {
  if (!account) return;
  $('sign').disabled = true;
  try {
    await ensureChain(cfg.chainId);
    const challenge = await callJson(cfg.base + '/challenge?wallet=' + encodeURIComponent(account));
    showStatus('Approve the sign-in message in your wallet…');
    const signature = await signTypedData(account, challenge.typed_data);
    showStatus('Checking the signature…');
    const done = await callJson(cfg.base + '/wallet-proof', { wallet: account, signature, issuedAt: challenge.issued_at });
    showStatus('Signed in. Returning to your agent…', 'ok');
    window.location.assign(done.redirectTo);
  } catch (e) {
    showStatus(walletError(e), 'error');
    $('sign').disabled = false;
  }
});
$('cancel').addEventListener('click', async () => {
  try {
    const done = await callJson(cfg.base + '/abort', {});
    window.location.assign(done.redirectTo);
  } catch (e) { showStatus(walletError(e), 'error'); }
});
`;
  return page('Sign in — x402 credit facilitator', body, { nonce, source });
}
