import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { PrivateKeyAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { typedDataFromJson } from '../../src/agents/signing.js';
import { mongoAdapterFactory } from '../../src/store/oauth-state.js';
import { findOrCreateBorrowerByWallet } from '../../src/store/borrowers.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { authorizationUrl, pkcePair, registerLoopbackClient } from '../support/oauth-client.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
  /** name=value of every Set-Cookie with a value. */
  cookies: Record<string, string>;
}

/** One HTTP request from a chosen source address (each test uses its own, so per-address limits do not mix). */
function http(url: string, opts: { method?: string; headers?: Record<string, string>; body?: unknown; from: string }): Promise<RawAnswer> {
  const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const headers = { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers, localAddress: opts.from }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const cookies: Record<string, string> = {};
        for (const line of res.headers['set-cookie'] ?? []) {
          const m = /^([^=;]+)=([^;]*)/.exec(line);
          if (m && m[2]) cookies[m[1]!] = m[2];
        }
        let json: unknown = null;
        try {
          json = text ? JSON.parse(text) : null;
        } catch {
          json = { unparsable: text.slice(0, 200) };
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json, cookies });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const cookieHeader = (cookies: Record<string, string>) => Object.entries(cookies).map(([k, v]) => `${k}=${v}`).join('; ');

const sign = (account: PrivateKeyAccount, typedData: Record<string, unknown>) =>
  account.signTypedData(typedDataFromJson(typedData) as Parameters<PrivateKeyAccount['signTypedData']>[0]);

/** A 429 in the one error shape, with Retry-After. */
function assertRateLimited(a: RawAnswer, what: string): void {
  assert.equal(a.status, 429, `${what}: ${a.status} ${JSON.stringify(a.json)}`);
  assert.ok(Number(a.headers['retry-after']) >= 1, `${what}: Retry-After ${String(a.headers['retry-after'])}`);
  assert.equal(a.json.error.code, 'RATE_LIMITED', what);
  assert.equal(typeof a.json.error.message, 'string', what);
  assert.match(a.json.error.requestId, /^req_/, what);
}

/**
 * With WALLET_SIGNIN_PER_MIN=1 a bucket's slots are wall-clock minutes: a run that crossed one would
 * see one more sign-in admitted. Starts the limited part early in a minute instead.
 */
async function earlyInAMinute(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 30_000) await new Promise((r) => setTimeout(r, 60_000 - into + 250));
}

/**
 * Issue 22, item 5 (borrower side): the borrower page's sign-in challenge is single-use, signing
 * out ends the session server-side, wallet sign-ins are rate limited per address and per wallet,
 * and a grant keeps a registered client only as long as the grant.
 */
describe('borrower web hardening: single-use challenge, server-side sign-out, sign-in limits, bounded client life', function () {
  this.timeout(240_000);
  const isolated = useIsolatedStack({ env: { WALLET_SIGNIN_PER_MIN: '1', WALLET_SIGNIN_BURST: '3' } });
  let origin: string;
  let address = 10;
  /** A source address no earlier request used. */
  const freshAddress = () => `127.0.0.${address++}`;

  before(function () {
    origin = new URL(isolated().world.baseUrl).origin;
  });

  /** A wallet that has signed in through an agent before (so it has a borrower), as the page requires. */
  async function knownWallet(): Promise<PrivateKeyAccount> {
    const account = privateKeyToAccount(generatePrivateKey());
    await findOrCreateBorrowerByWallet(isolated().world.store.c, account.address, randomUUID(), new Date());
    return account;
  }

  /** The page's challenge (with its cookie) and the wallet's signature over it: a complete sign-in request. */
  async function pageSignInRequest(account: PrivateKeyAccount, from: string): Promise<{ cookie: string; body: Record<string, unknown> }> {
    const ch = await http(`${origin}/borrower/api/session/challenge?wallet=${account.address}`, { from });
    assert.equal(ch.status, 200, JSON.stringify(ch.json));
    const signature = await sign(account, ch.json.typed_data);
    return { cookie: cookieHeader(ch.cookies), body: { wallet: account.address, signature, issuedAt: ch.json.issued_at } };
  }

  const postSession = (r: { cookie: string; body: unknown }, from: string) =>
    http(`${origin}/borrower/api/session`, { method: 'POST', headers: { origin, cookie: r.cookie }, body: r.body, from });

  /** An OAuth authorization started from `from`: the interaction's uid and its cookies. */
  async function startInteraction(clientId: string, redirectUri: string, from: string): Promise<{ base: string; cookie: string }> {
    const { challenge } = pkcePair();
    const auth = await http(authorizationUrl(origin, { clientId, redirectUri, scope: 'borrower:token', state: 's', challenge, method: 'S256' }), { from });
    assert.equal(auth.status, 303, JSON.stringify(auth.json));
    const location = new URL(String(auth.headers.location), origin);
    assert.match(location.pathname, /^\/oauth\/interaction\//);
    return { base: `${origin}${location.pathname}`, cookie: cookieHeader(auth.cookies) };
  }

  async function walletProof(interaction: { base: string; cookie: string }, account: PrivateKeyAccount, from: string): Promise<RawAnswer> {
    const ch = await http(`${interaction.base}/challenge?wallet=${account.address}`, { headers: { cookie: interaction.cookie }, from });
    assert.equal(ch.status, 200, JSON.stringify(ch.json));
    const signature = await sign(account, ch.json.typed_data);
    return http(`${interaction.base}/wallet-proof`, { method: 'POST', headers: { cookie: interaction.cookie }, body: { wallet: account.address, signature, issuedAt: ch.json.issued_at }, from });
  }

  it('the borrower page signs in once per challenge: the same cookie and signature sent again are refused', async function () {
    const account = await knownWallet();
    const from = freshAddress();
    const signIn = await pageSignInRequest(account, from);
    const first = await postSession(signIn, from);
    assert.equal(first.status, 200, JSON.stringify(first.json));
    assert.ok(first.cookies.borrower_session, 'a session');
    const replay = await postSession(signIn, from);
    assert.equal(replay.status, 400, JSON.stringify(replay.json));
    assert.equal(replay.json.error.code, 'INVALID_REQUEST');
    assert.match(replay.json.error.message, /already used/);
    assert.equal(replay.cookies.borrower_session, undefined, 'no second session');
    // A new challenge signs in again.
    assert.equal((await postSession(await pageSignInRequest(account, from), from)).status, 200);
  });

  it('signing out ends the session at once: the old cookie no longer reads the account', async function () {
    const account = await knownWallet();
    const from = freshAddress();
    const session = (await postSession(await pageSignInRequest(account, from), from)).cookies.borrower_session;
    assert.ok(session);
    const cookie = `borrower_session=${session}`;
    const read = await http(`${origin}/borrower/api/account`, { headers: { cookie }, from });
    assert.equal(read.status, 200, JSON.stringify(read.json));
    const out = await http(`${origin}/borrower/api/session/end`, { method: 'POST', headers: { origin, cookie }, from });
    assert.equal(out.status, 200, JSON.stringify(out.json));
    for (const [method, path] of [['GET', '/borrower/api/account'], ['POST', `/borrower/api/operational-agents/${randomUUID()}/revoke`]] as const) {
      const after = await http(`${origin}${path}`, { method, headers: { origin, cookie }, ...(method === 'POST' ? { body: {} } : {}), from });
      assert.equal(after.status, 401, `${method} ${path} with the signed-out cookie: ${JSON.stringify(after.json)}`);
      assert.equal(after.json.error.code, 'UNAUTHENTICATED');
    }
  });

  it('limits wallet sign-ins per source address (both sign-in pages) and per wallet, with 429 and Retry-After; a refused sign-in creates no borrower', async function () {
    const w = isolated().world;
    await earlyInAMinute();
    // Per address: three attempts (malformed or not) pass the limit, the fourth is refused, on either page.
    const flooder = freshAddress();
    for (let i = 0; i < 3; i++) {
      const a = await http(`${origin}/borrower/api/session`, { method: 'POST', headers: { origin }, body: {}, from: flooder });
      assert.equal(a.status, 400, JSON.stringify(a.json));
    }
    assertRateLimited(await http(`${origin}/borrower/api/session`, { method: 'POST', headers: { origin }, body: {}, from: flooder }), 'page sign-in, per address');
    const redirectUri = 'http://127.0.0.1:43999/callback';
    const clientId = await registerLoopbackClient(origin, redirectUri, 'Sign-in limit test');
    const stranger = privateKeyToAccount(generatePrivateKey());
    const limitedProof = await walletProof(await startInteraction(clientId, redirectUri, flooder), stranger, flooder);
    assertRateLimited(limitedProof, 'OAuth wallet-proof, per address');
    assert.equal(await w.store.c.wallets.countDocuments({ _id: stranger.address.toLowerCase() }), 0, 'no borrower for a refused sign-in');
    // Another address has its own allowance.
    const other = freshAddress();
    assert.equal((await walletProof(await startInteraction(clientId, redirectUri, other), stranger, other)).status, 200);

    // Per wallet: valid sign-ins of one wallet from ever new addresses, on both pages, share one allowance.
    const account = await knownWallet();
    const first = freshAddress();
    assert.equal((await walletProof(await startInteraction(clientId, redirectUri, first), account, first)).status, 200);
    for (let i = 0; i < 2; i++) {
      const from = freshAddress();
      const a = await postSession(await pageSignInRequest(account, from), from);
      assert.equal(a.status, 200, JSON.stringify(a.json));
    }
    const from = freshAddress();
    assertRateLimited(await postSession(await pageSignInRequest(account, from), from), 'page sign-in, per wallet');
    const last = freshAddress();
    assertRateLimited(await walletProof(await startInteraction(clientId, redirectUri, last), account, last), 'OAuth wallet-proof, per wallet');
  });

  it("a grant keeps a registered client only until the grant expires, not forever", async function () {
    const w = isolated().world;
    const redirectUri = 'http://127.0.0.1:43999/callback';
    const clientId = await registerLoopbackClient(origin, redirectUri, 'Throwaway registration');
    const clients = w.store.db.collection<{ _id: string; expiresAt: Date | null }>('oauth_client');
    const registered = (await clients.findOne({ _id: clientId }))?.expiresAt;
    assert.ok(registered, 'a new client expires');

    const from = freshAddress();
    const proof = await walletProof(await startInteraction(clientId, redirectUri, from), privateKeyToAccount(generatePrivateKey()), from);
    assert.equal(proof.status, 200, JSON.stringify(proof.json));
    const grant = await w.store.db.collection<{ _id: string; expiresAt: Date | null; payload: string }>('oauth_grant').findOne({ payload: { $regex: clientId } });
    assert.ok(grant?.expiresAt, 'the grant expires');
    const kept = (await clients.findOne({ _id: clientId }))?.expiresAt;
    assert.ok(kept, 'a grant no longer makes the client immortal');
    assert.equal(kept.getTime(), grant.expiresAt.getTime(), "the client's expiry moved out to its grant's");
    assert.ok(kept.getTime() > registered.getTime());

    // The server's adapter, at chosen times: alive while the grant stands, gone after.
    let now = grant.expiresAt.getTime() - 60_000;
    const adapter = mongoAdapterFactory(() => w.store.db, () => now, { unusedClientTtlMs: 24 * 3600_000 });
    assert.equal((await adapter('Client').find(clientId))?.client_id, clientId);
    now = grant.expiresAt.getTime() + 1000;
    assert.equal(await adapter('Client').find(clientId), undefined, 'gone with its last grant');
  });
});
