import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import type { AppDeps } from '../../src/main/app-deps.js';
import { loadEnv, mcpUrl, oauthIssuer } from '../../src/config/env.js';
import { authenticateBorrower, bearerToken } from '../../src/mcp/auth.js';

describe('mcp bearer auth (borrower tokens)', function () {
  const env = loadEnv({ API_PORT: '8402' });
  let privateKey: CryptoKey;
  let deps: AppDeps;
  const now = Math.floor(Date.now() / 1000);

  before(async function () {
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    const pub = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    // oidc-provider's grant collection: one live grant, one expired; revoked grants are simply gone.
    const grants = new Map<string, { _id: string; expiresAt: Date | null; payload?: string }>([
      ['grant-live', { _id: 'grant-live', expiresAt: null, payload: JSON.stringify({ resources: { [mcpUrl(env)]: 'borrower:token handle:claim nope:scope', 'https://other.example/mcp': 'repayment:execute' } }) }],
      ['grant-expired', { _id: 'grant-expired', expiresAt: new Date((now - 60) * 1000) }],
    ]);
    const db = { collection: () => ({ findOne: async (f: { _id: string }) => grants.get(f._id) ?? null }) };
    deps = { env, store: { db }, oauthKeys: { privateJwks: { keys: [] }, publicJwks: { keys: [pub] }, cookieKeys: [] }, nowMs: () => now * 1000 } as unknown as AppDeps;
  });

  const mint = (o: { sub?: string; aud?: string; iss?: string; exp?: number; typ?: string; claims?: Record<string, unknown>; key?: CryptoKey } = {}) =>
    new SignJWT({ scope: 'borrower:token credit:facility:accept unknown:scope', client_id: 'host-1', grant_id: 'grant-live', ...o.claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: o.typ ?? 'at+jwt' })
      .setIssuer(o.iss ?? oauthIssuer(env))
      .setAudience(o.aud ?? mcpUrl(env))
      .setSubject(o.sub ?? '0b8f6c4e-3a1d-4c8e-9f00-1234567890ab')
      .setIssuedAt(now - 10)
      .setExpirationTime(o.exp ?? now + 600)
      .sign(o.key ?? privateKey);

  it('parses the bearer credential', function () {
    assert.equal(bearerToken('Bearer abc'), 'abc');
    assert.equal(bearerToken('bearer abc'), 'abc');
    assert.equal(bearerToken('Basic abc'), undefined);
    assert.equal(bearerToken(undefined), undefined);
    assert.equal(bearerToken('Bearer a b'), undefined);
  });

  it('builds the principal from a valid token, keeping only known scopes', async function () {
    const r = await authenticateBorrower(deps, `Bearer ${await mint()}`);
    assert.ok(r.ok);
    assert.deepEqual(r.principal, { borrowerId: '0b8f6c4e-3a1d-4c8e-9f00-1234567890ab', clientId: 'host-1', scopes: ['borrower:token', 'credit:facility:accept'], expiresAt: now + 600 });
    assert.equal(r.authInfo.clientId, 'host-1');
    assert.deepEqual(r.authInfo.extra?.borrowerId, '0b8f6c4e-3a1d-4c8e-9f00-1234567890ab');
    assert.deepEqual(r.consentedScopes, ['borrower:token', 'handle:claim'], 'the grant\'s known scopes for this resource (the step-up challenge names them)');
  });

  it('refuses missing, foreign, expired and malformed tokens', async function () {
    const other = (await generateKeyPair('ES256')).privateKey;
    const bad: [string, string | undefined, boolean][] = [
      ['none', undefined, false],
      ['merchant key', `Bearer sk_live_${'A'.repeat(43)}`, true],
      ['expired', `Bearer ${await mint({ exp: now - 60 })}`, true],
      ['audience', `Bearer ${await mint({ aud: 'https://other.example/mcp' })}`, true],
      ['issuer', `Bearer ${await mint({ iss: 'https://other.example/oauth' })}`, true],
      ['key', `Bearer ${await mint({ key: other })}`, true],
      ['typ', `Bearer ${await mint({ typ: 'JWT' })}`, true],
      ['sub', `Bearer ${await mint({ sub: 'not-a-uuid' })}`, true],
      ['client_id', `Bearer ${await mint({ claims: { client_id: undefined } })}`, true],
      ['no grant id', `Bearer ${await mint({ claims: { grant_id: undefined } })}`, true],
      ['revoked grant', `Bearer ${await mint({ claims: { grant_id: 'grant-revoked' } })}`, true],
      ['expired grant', `Bearer ${await mint({ claims: { grant_id: 'grant-expired' } })}`, true],
    ];
    for (const [name, header, presented] of bad) {
      const r = await authenticateBorrower(deps, header);
      assert.equal(r.ok, false, name);
      if (!r.ok) assert.equal(r.tokenPresented, presented, name);
    }
  });

  it('tolerates a few seconds of clock drift, not more', async function () {
    assert.ok((await authenticateBorrower(deps, `Bearer ${await mint({ exp: now - 2 })}`)).ok);
    assert.ok(!(await authenticateBorrower(deps, `Bearer ${await mint({ exp: now - 30 })}`)).ok);
  });
});
