import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needsRefresh, REFRESH_WINDOW_SECONDS, tokenExpiresAtMs } from '@credit-facilitator/agent-client/token-expiry';
import { CreditAgentOAuthProvider } from '@credit-facilitator/agent-client/oauth';
import { SCOPES } from '@credit-facilitator/wire/onboarding';

describe('agent-client/token expiry and the OAuth provider', () => {
  const T0 = 1_700_000_000_000;

  it('refreshes only inside the three-minute window', () => {
    const t = { obtainedAtMs: T0, expiresInSeconds: 900 };
    assert.equal(REFRESH_WINDOW_SECONDS, 180);
    assert.equal(tokenExpiresAtMs(t), T0 + 900_000);
    assert.equal(needsRefresh(t, T0), false);
    assert.equal(needsRefresh(t, T0 + 719_999), false);
    assert.equal(needsRefresh(t, T0 + 720_000), true);
    assert.equal(needsRefresh(t, T0 + 2_000_000), true);
    assert.equal(needsRefresh({ obtainedAtMs: T0 }, T0 + 10_000_000), false, 'no expires_in: no proactive refresh');
  });

  it('records when tokens arrived and computes expiry from expires_in', () => {
    let now = T0;
    const p = new CreditAgentOAuthProvider({ redirectUrl: 'http://127.0.0.1:5555/callback', onRedirect: () => undefined, now: () => now });
    assert.equal(p.needsRefresh(), false, 'no tokens yet');
    p.saveTokens({ access_token: 'a', token_type: 'Bearer', expires_in: 900, refresh_token: 'r', scope: 'borrower:token' });
    assert.equal(p.accessTokenExpiresAtMs(), T0 + 900_000);
    now = T0 + 700_000;
    assert.equal(p.needsRefresh(), false);
    now = T0 + 721_000;
    assert.equal(p.needsRefresh(), true);
    now = T0 + 800_000;
    p.saveTokens({ access_token: 'b', token_type: 'Bearer', expires_in: 900, refresh_token: 'r2', scope: SCOPES.join(' ') });
    assert.equal(p.needsRefresh(), false, 'a refreshed token restarts the clock');
  });

  it('registers as a public loopback client asking for every scope, and keeps the full list on the authorization URL', async () => {
    const opened: URL[] = [];
    const p = new CreditAgentOAuthProvider({ redirectUrl: 'http://127.0.0.1:5555/callback', onRedirect: (u) => void opened.push(u) });
    const m = p.clientMetadata;
    assert.deepEqual(m.redirect_uris, ['http://127.0.0.1:5555/callback']);
    assert.deepEqual(m.grant_types, ['authorization_code', 'refresh_token']);
    assert.equal(m.token_endpoint_auth_method, 'none');
    assert.equal(m.scope, SCOPES.join(' '));
    await p.redirectToAuthorization(new URL('http://127.0.0.1:8402/oauth/auth?scope=borrower%3Atoken&client_id=x'));
    assert.deepEqual(new Set(opened[0]!.searchParams.get('scope')!.split(' ')), new Set(SCOPES));
  });

  it('persists registration and tokens to a 0600 file and reads them back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-state-'));
    try {
      const path = join(dir, 'oauth.json');
      const a = new CreditAgentOAuthProvider({ redirectUrl: 'http://127.0.0.1:5555/callback', onRedirect: () => undefined, storagePath: path, now: () => T0 });
      a.saveClientInformation({ client_id: 'client-1', issuer: 'http://127.0.0.1:8402/oauth' });
      a.saveTokens({ access_token: 'a', token_type: 'Bearer', expires_in: 900, refresh_token: 'r' });
      assert.equal(statSync(path).mode & 0o777, 0o600);
      const b = new CreditAgentOAuthProvider({ redirectUrl: 'http://127.0.0.1:5555/callback', onRedirect: () => undefined, storagePath: path, now: () => T0 + 800_000 });
      assert.equal(b.clientInformation()?.client_id, 'client-1');
      assert.equal(b.tokens()?.refresh_token, 'r');
      assert.equal(b.needsRefresh(), true);
      b.invalidateCredentials('tokens');
      const c = new CreditAgentOAuthProvider({ redirectUrl: 'http://127.0.0.1:5555/callback', onRedirect: () => undefined, storagePath: path });
      assert.equal(c.tokens(), undefined);
      assert.equal(c.clientInformation()?.client_id, 'client-1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
