/**
 * Browser-side helpers shared by the borrower pages and the merchant console (plain ES2020, inlined into the
 * page). They talk to an EIP-1193 wallet (window.ethereum) and to our own JSON endpoints.
 */
export const WALLET_HELPERS = String.raw`
const $ = (id) => document.getElementById(id);
function showStatus(message, kind) {
  const el = $('status');
  el.textContent = message;
  el.className = 'status' + (kind ? ' ' + kind : '');
}
function walletError(err) {
  if (err && err.code === 4001) return 'You declined the request in your wallet.';
  return (err && err.message) ? err.message : String(err);
}
async function connectWallet() {
  if (!window.ethereum || typeof window.ethereum.request !== 'function') {
    throw new Error('No browser wallet found. Enable an EIP-1193 wallet (for example a browser extension) and reload this page.');
  }
  const accounts = await window.ethereum.request({ method: 'eth_requestAccounts' });
  if (!Array.isArray(accounts) || accounts.length === 0) throw new Error('The wallet returned no account.');
  return String(accounts[0]).toLowerCase();
}
async function ensureChain(chainId) {
  const wanted = '0x' + Number(chainId).toString(16);
  let current;
  try { current = await window.ethereum.request({ method: 'eth_chainId' }); } catch (e) { return; }
  if (String(current).toLowerCase() === wanted) return;
  try {
    await window.ethereum.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: wanted }] });
  } catch (e) {
    throw new Error('Switch your wallet to chain ' + Number(chainId) + ' and try again.');
  }
}
async function signTypedData(account, typedData) {
  return window.ethereum.request({ method: 'eth_signTypedData_v4', params: [account, JSON.stringify(typedData)] });
}
async function callJson(url, body) {
  const init = body === undefined
    ? { headers: { accept: 'application/json' } }
    : { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) };
  const res = await fetch(url, { credentials: 'same-origin', ...init });
  let json = null;
  try { json = await res.json(); } catch (e) { json = null; }
  if (!res.ok) {
    const message = json && json.error && json.error.message ? json.error.message : 'The server answered ' + res.status + '.';
    throw new Error(message);
  }
  return json;
}
`;
