import { WALLET_HELPERS } from './client-script.js';
import { jsonForScript, page } from '../http/html.js';

/**
 * The borrower's own page: sign in with the wallet, then see and stop what agents do with the
 * credit. Everything shown comes from /borrower/api/account and is written with textContent.
 */
export function accountPage(chainId: number, nonce: string): string {
  const body = `
<h1>Your agents and credit</h1>
<section id="signed-out">
  <p>Sign in with the wallet you use with your agents. Signing in moves no funds: your wallet signs a message proving you control it. Never enter a seed phrase or private key on any page.</p>
  <button id="connect" type="button">Connect wallet and sign in</button>
</section>
<section id="signed-in" hidden>
  <p>Wallet <span id="wallet" class="mono"></span> <button id="sign-out" type="button">Sign out</button></p>
  <p id="suspended" class="error" hidden></p>
  <h2>Credit</h2>
  <dl id="credit"></dl>
  <h2>Operational agents</h2>
  <p class="muted">Revoking a key or an agent takes effect at once: its next payment is refused, even one it prepared before. Revoking an agent also disconnects the app it signed in through (below). Lowering a limit asks your wallet to sign a new grant. Amounts are in base units of <span id="asset-name"></span> (<span id="asset-decimals"></span> decimals).</p>
  <div id="agents"></div>
  <h2>Connected apps</h2>
  <p class="muted">Apps you signed in to with your wallet. Disconnecting one ends its access at once: its tokens stop working on their next use, and it can only get new ones after you sign in with your wallet again. Every agent of that app loses access; its keys stay until you revoke them.</p>
  <ul id="clients"></ul>
  <h2>Open holds</h2>
  <ul id="holds"></ul>
  <h2>Recent payments</h2>
  <ul id="payments"></ul>
</section>
<p id="status" class="status" role="status" aria-live="polite"></p>`;
  const source = `${WALLET_HELPERS}
const cfg = ${jsonForScript({ api: '/borrower/api', chainId })};
let account = null;
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function button(label, cls, data) {
  const b = el('button', label, cls);
  b.type = 'button';
  for (const [k, v] of Object.entries(data)) b.dataset[k] = v;
  return b;
}
function row(dl, term, value) { dl.append(el('dt', term), el('dd', value)); }
function renderAgent(a) {
  const box = el('div', null, 'agent');
  box.dataset.agentId = a.operational_agent_id;
  const title = el('h3', (a.label || 'Unnamed agent') + (a.revoked_at ? ' (revoked)' : ''));
  box.append(title, el('p', a.operational_agent_id, 'mono muted'), el('p', 'Signed in through ' + a.client_id, 'muted agent-client'));
  if (!a.revoked_at) box.append(button('Revoke this agent', 'revoke-agent', { agentId: a.operational_agent_id }));
  const list = el('ul');
  for (const k of a.agent_keys) {
    const li = el('li', null, 'key');
    li.dataset.keyId = k.key_id;
    li.append(el('span', k.public_key, 'mono'), el('br'));
    li.append(el('span', k.status, 'key-status'));
    const dl = el('dl');
    row(dl, 'Per payment', k.per_payment_limit ?? '—');
    row(dl, 'Per day', k.daily_limit ?? '—');
    row(dl, 'Spent today', k.spent_today);
    row(dl, 'Grant ends', k.expires_at ? new Date(k.expires_at * 1000).toLocaleString() : '—');
    li.append(dl);
    if (k.status === 'active') {
      li.append(button('Revoke key', 'revoke-key', { keyId: k.key_id }));
      const per = el('input'); per.className = 'per-limit'; per.inputMode = 'numeric'; per.value = k.per_payment_limit ?? ''; per.setAttribute('aria-label', 'New per-payment limit');
      const daily = el('input'); daily.className = 'daily-limit'; daily.inputMode = 'numeric'; daily.value = k.daily_limit ?? ''; daily.setAttribute('aria-label', 'New daily limit');
      li.append(el('br'), per, daily, button('Lower limits', 'lower-limits', { keyId: k.key_id }));
    }
    list.append(li);
  }
  box.append(list);
  return box;
}
function renderClient(c) {
  const li = el('li', null, 'client');
  li.dataset.clientId = c.client_id;
  li.append(el('strong', c.client_name || c.client_id), el('br'));
  if (c.client_name) li.append(el('span', c.client_id, 'mono muted'), el('br'));
  const dl = el('dl');
  row(dl, 'Access', c.scopes.join(' '));
  row(dl, 'Connected', c.granted_at ? new Date(c.granted_at).toLocaleString() : '—');
  row(dl, 'Last token', c.last_used_at ? new Date(c.last_used_at).toLocaleString() : 'unknown');
  li.append(dl, button('Disconnect', 'disconnect-client', { clientId: c.client_id }));
  return li;
}
function render(v) {
  $('signed-out').hidden = true;
  $('signed-in').hidden = false;
  $('wallet').textContent = v.wallet;
  $('asset-name').textContent = v.asset.name;
  $('asset-decimals').textContent = v.asset.decimals;
  $('suspended').hidden = !v.suspended;
  $('suspended').textContent = v.suspended ? 'The operator suspended your account (' + v.suspended.reason + '): no new payments until reinstated.' : '';
  const credit = $('credit');
  credit.replaceChildren();
  row(credit, 'Limit', v.credit.limit);
  row(credit, 'Available', v.credit.available);
  row(credit, 'Held', v.credit.held);
  row(credit, 'Debt', v.credit.debt);
  $('agents').replaceChildren(...v.operational_agents.map(renderAgent));
  $('clients').replaceChildren(...(v.connected_clients.length ? v.connected_clients.map(renderClient) : [el('li', 'None.', 'muted')]));
  $('holds').replaceChildren(...(v.holds.length ? v.holds.map((h) => el('li', h.amount + ' to ' + (h.merchant || 'unknown merchant') + (h.order_ref ? ' for ' + h.order_ref : '') + (h.expires_at ? ', until ' + new Date(h.expires_at).toLocaleString() : ''))) : [el('li', 'None.', 'muted')]));
  $('payments').replaceChildren(...(v.recent_payments.length ? v.recent_payments.map((p) => {
    const li = el('li', new Date(p.captured_at).toLocaleString() + ': ' + p.amount + ' to ' + (p.merchant || 'unknown merchant') + ' (' + p.order_ref + ') ', 'payment');
    li.append(el('strong', p.status));
    return li;
  }) : [el('li', 'None yet.', 'muted')]));
}
async function load() {
  try { render(await callJson(cfg.api + '/account')); }
  catch (e) { $('signed-out').hidden = false; $('signed-in').hidden = true; }
}
$('connect').addEventListener('click', async () => {
  $('connect').disabled = true;
  try {
    showStatus('Waiting for your wallet…');
    account = await connectWallet();
    await ensureChain(cfg.chainId);
    const challenge = await callJson(cfg.api + '/session/challenge?wallet=' + encodeURIComponent(account));
    showStatus('Approve the sign-in message in your wallet…');
    const signature = await signTypedData(account, challenge.typed_data);
    await callJson(cfg.api + '/session', { wallet: account, signature, issuedAt: challenge.issued_at });
    await load();
    showStatus('Signed in.', 'ok');
  } catch (e) { showStatus(walletError(e), 'error'); }
  $('connect').disabled = false;
});
$('sign-out').addEventListener('click', async () => {
  try { await callJson(cfg.api + '/session/end', {}); } catch (e) { /* signed out either way */ }
  $('signed-in').hidden = true; $('signed-out').hidden = false; showStatus('Signed out.');
});
$('agents').addEventListener('click', async (ev) => {
  const b = ev.target.closest('button');
  if (!b) return;
  try {
    if (b.classList.contains('revoke-key')) {
      if (!window.confirm('Revoke this key now? Its agent can no longer pay with it, not even payments it prepared.')) return;
      b.disabled = true;
      await callJson(cfg.api + '/agent-keys/' + encodeURIComponent(b.dataset.keyId) + '/revoke', {});
      showStatus('Key revoked.', 'ok');
    } else if (b.classList.contains('revoke-agent')) {
      if (!window.confirm('Revoke this agent and all its keys now? It can no longer pay or get new keys, and the app it signed in through is disconnected.')) return;
      b.disabled = true;
      await callJson(cfg.api + '/operational-agents/' + encodeURIComponent(b.dataset.agentId) + '/revoke', {});
      showStatus('Agent revoked.', 'ok');
    } else if (b.classList.contains('lower-limits')) {
      const li = b.closest('li');
      const limits = { per_payment_limit: li.querySelector('.per-limit').value.trim(), daily_limit: li.querySelector('.daily-limit').value.trim() };
      b.disabled = true;
      const base = cfg.api + '/agent-keys/' + encodeURIComponent(b.dataset.keyId) + '/limits';
      const grant = await callJson(base + '/typed-data', limits);
      if (!account) account = await connectWallet();
      await ensureChain(cfg.chainId);
      showStatus('Approve the new grant in your wallet…');
      const signature = await signTypedData(account, grant.typed_data);
      await callJson(base, { ...limits, nonce: grant.nonce, signature });
      showStatus('Limits lowered.', 'ok');
    } else return;
  } catch (e) { showStatus(walletError(e), 'error'); }
  await load();
});
$('clients').addEventListener('click', async (ev) => {
  const b = ev.target.closest('button.disconnect-client');
  if (!b) return;
  if (!window.confirm('Disconnect this app now? Its access ends at once; it needs your wallet to sign in again.')) return;
  b.disabled = true;
  try {
    await callJson(cfg.api + '/connected-clients/disconnect', { client_id: b.dataset.clientId });
    showStatus('App disconnected.', 'ok');
  } catch (e) { showStatus(walletError(e), 'error'); }
  await load();
});
load();
`;
  return page('Your agents — x402 credit facilitator', body, { nonce, source });
}
